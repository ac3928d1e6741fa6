"""Representations of any ``torch.nn.Module``: the output of a named layer (or, by default,
the input of the last linear layer: the penultimate representation z of FedDecorr Sec. 3),
taken by a forward hook, in float64. For models trained outside collapse-lab, whose
``forward`` returns logits only, and for ``--model-factory``."""
from __future__ import annotations

import copy
import importlib
import inspect
from typing import Callable

import torch
import torch.nn as nn

from ...errors import CollapseLabError
from ...layerwise.modules import forward_with_hooks


def features(model: nn.Module, x: torch.Tensor, layer: str | None = None, to_float: Callable | None = None,
             dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu",
             batch_size: int = 1024) -> torch.Tensor:
    """The representation of every row of ``x`` (N x ...), flattened to N x d: the output of
    module ``layer`` (a name from ``model.named_modules()``), or with ``layer=None`` the input
    of the last linear layer. The model is copied, cast to ``dtype`` and put in eval mode
    (BatchNorm uses its running statistics); the caller's model is not changed.
    ``to_float(batch, dtype)`` normalises stored inputs (``Dataset.to_float``)."""
    m = copy.deepcopy(model).to(device=device, dtype=dtype).eval()
    got: list[torch.Tensor] = []

    def grab(name, t):
        if isinstance(t, (tuple, list)):
            t = t[0]
        got.append(t.detach().flatten(1).to("cpu", dtype))

    forward_with_hooks(m, [layer], x, grab, to_float, dtype, device, batch_size)
    return torch.cat(got) if got else torch.zeros(0, 0, dtype=dtype)


def load_factory(spec: str) -> Callable:
    """``package.module:function`` (given by the user; never read from a store) -> the callable."""
    mod, sep, fn = spec.partition(":")
    if not sep or not mod or not fn:
        raise CollapseLabError(f"--model-factory {spec!r}: write it as package.module:function")
    import os
    import sys

    # A console script does not have the working directory on sys.path, as ``python -m``
    # does: a Flower app's ``pytorchexample.task`` is found when run from the app's folder.
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.append(os.getcwd())
    try:
        module = importlib.import_module(mod)
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: BLE001 (the user's module: any import error, sys.exit included, is one line)
        why = f"it exited with status {e.code}" if isinstance(e, SystemExit) else (
            f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        raise CollapseLabError(f"--model-factory {spec}: cannot import {mod} ({why}); run from the folder that holds "
                               "the package or add it to PYTHONPATH") from None
    obj = getattr(module, fn, None)
    if not callable(obj):
        raise CollapseLabError(f"--model-factory {spec}: {mod} has no function {fn}")
    return obj


def build_from_factory(factory: Callable, num_classes: int, input_shape: tuple, spec: str = "the factory",
                       with_normalize: bool = False):
    """Call a user's model factory with what it asks for of ``num_classes`` and
    ``input_shape`` (by parameter name), and check that it returns a module. A factory may
    return ``(module, normalize)``, the input normalisation its model was trained with
    (``data.normalize``: ``"0.5/0.5"`` or ``((mean...), (std...))``); ``with_normalize``
    returns ``(module, canonical normalize or None)``."""
    params = inspect.signature(factory).parameters
    kwargs = {k: v for k, v in (("num_classes", num_classes), ("input_shape", tuple(input_shape))) if k in params}
    try:
        model = factory(**kwargs)
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: BLE001 (the user's code: its failure is one line)
        raise CollapseLabError(f"--model-factory {spec}: calling it failed ({type(e).__name__}: "
                               f"{str(e).splitlines()[0] if str(e) else ''})") from None
    norm = None
    if isinstance(model, tuple) and len(model) == 2 and isinstance(model[0], nn.Module):
        from ...data.normalize import canonical

        model, norm = model[0], canonical(model[1], f"--model-factory {spec}: its normalize")
    if not isinstance(model, nn.Module):
        raise CollapseLabError(f"--model-factory {spec}: it returned {type(model).__name__}, not a torch.nn.Module")
    return (model, norm) if with_normalize else model
