"""Naming a network's modules, for models of collapse-lab and of anyone else: the classifier
(the last ``nn.Linear``, whose input is the representation z of FedDecorr Sec. 3) and a module
by its ``named_modules()`` name; one forward pass that reads any of them."""
from __future__ import annotations

from typing import Callable

import torch
import torch.nn as nn

from ..errors import CollapseLabError


def last_linear(model: nn.Module) -> str:
    """The name of the model's last ``nn.Linear`` in registration order (its classifier)."""
    names = [n for n, m in model.named_modules() if isinstance(m, nn.Linear)]
    if not names:
        raise CollapseLabError(f"{type(model).__name__} has no nn.Linear layer whose input would be the "
                               "representation; name the layer with layer=... (--layer)")
    return names[-1]


def find_module(model: nn.Module, layer: str) -> nn.Module:
    """The module named ``layer`` in ``model.named_modules()``; an unknown name is one line
    that names near ones."""
    modules = dict(model.named_modules())
    if layer not in modules:
        near = [n for n in modules if n and (layer in n or n in layer)][:5] or [n for n in modules if n][-5:]
        raise CollapseLabError(f"--layer {layer!r}: {type(model).__name__} has no such module; e.g. {', '.join(near)}")
    return modules[layer]


def forward_with_hooks(model: nn.Module, names: list[str | None], x: torch.Tensor, grab: Callable,
                       to_float: Callable | None = None, dtype: torch.dtype = torch.float64,
                       device: torch.device | str = "cpu", batch_size: int = 512) -> None:
    """One forward pass of ``x``, batch by batch without gradients, calling ``grab(name, t)``
    per batch with each named module's output, or for ``None`` the input of the last linear
    layer (z). ``to_float(batch, dtype)`` normalises stored inputs (``Dataset.to_float``); the
    hooks are removed whatever happens."""
    handles = []
    for name in names:
        pre = name is None
        target = find_module(model, last_linear(model) if pre else name)

        def hook(mod, args, out=None, name=name, pre=pre):
            grab(name, args[0] if pre else out)

        handles.append(target.register_forward_pre_hook(hook) if pre else target.register_forward_hook(hook))
    try:
        with torch.inference_mode():
            for s in range(0, len(x), batch_size):
                xb = x[s:s + batch_size].to(device)
                model(to_float(xb, dtype) if to_float is not None else xb.to(dtype))
    finally:
        for h in handles:
            h.remove()
