"""Model registry. Every model's ``forward(x)`` returns ``(logits, z)`` where ``z`` is the
penultimate representation fed to the last linear layer ``model.classifier``; its width
is ``model.feature_dim``.

A model is one file here with a factory ``(num_classes, input_shape, *options)``
decorated ``@MODELS.register(name)``; the factory's signature is checked when it
registers, and the built module's contract (``feature_dim``, a linear ``classifier``
reading z, ``(logits, z)`` from forward) by ``build_model`` and ``check_forward``.
"""
from __future__ import annotations

import torch
import torch.nn as nn

from ..errors import CollapseLabError
from ..registry import Registry, option_names


def _check(name, fn, info) -> None:
    if option_names(fn)[:2] != ["num_classes", "input_shape"]:
        raise TypeError(f"model {name}: the factory takes (num_classes, input_shape, *options)")


MODELS: Registry = Registry("model", __name__, flag="--model", check=_check)


def build_model(name: str, num_classes: int, input_shape: tuple[int, ...], **options) -> nn.Module:
    model = MODELS.call(name, num_classes, tuple(input_shape), **options)
    d = getattr(model, "feature_dim", None)
    cl = getattr(model, "classifier", None)
    if not isinstance(d, int) or d < 1 or not isinstance(cl, nn.Linear) or cl.in_features != d:
        raise TypeError(f"model {name} breaks the model contract: it needs an int feature_dim >= 1 and a "
                        f"classifier nn.Linear(feature_dim, num_classes) (got feature_dim={d!r}, classifier={cl!r})")
    return model


def check_forward(name: str, model: nn.Module, input_shape: tuple[int, ...], num_classes: int) -> None:
    """One forward pass of two samples in eval mode: (logits, z) of the right shapes, or a
    one-line error (e.g. an input the architecture cannot take)."""
    x = torch.zeros(2, *input_shape)
    was = model.training
    model.eval()
    try:
        with torch.no_grad():
            out = model(x)
    except RuntimeError as e:
        raise CollapseLabError(f"--model {name} cannot take inputs of shape {tuple(input_shape)} "
                               f"({str(e).splitlines()[0]}); choose another model") from None
    finally:
        model.train(was)
    if not (isinstance(out, tuple) and len(out) == 2 and tuple(out[0].shape) == (2, num_classes)
            and tuple(out[1].shape) == (2, model.feature_dim)):
        raise TypeError(f"model {name}: forward must return (logits (N, {num_classes}), z (N, {model.feature_dim}))")


def revision(name: str) -> int:
    """The current revision of model ``name`` (1 unless its file says otherwise). A model
    whose architecture is corrected gets a new revision; runs record the one they trained
    (``RunConfig.model_revision``) and earlier revisions stay registered under their own
    names (``earlier={revision: name}``), so a stored run always loads what it trained."""
    return int(MODELS.info(name).get("revision", 1))


def builder(name: str, rev: int = 1) -> str:
    """The registered model that builds revision ``rev`` of ``name``."""
    if rev == revision(name):
        return name
    old = MODELS.info(name).get("earlier", {}).get(rev)
    if old is None:
        raise CollapseLabError(f"model {name} has no revision {rev} (this collapse-lab has revision {revision(name)}); "
                               "the run was stored by a newer collapse-lab: upgrade it")
    return old


__all__ = ["MODELS", "build_model", "builder", "check_forward", "revision"]
