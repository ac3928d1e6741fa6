"""Naming a network's modules, for models of collapse-lab and of anyone else: the classifier
(the last ``nn.Linear``, whose input is the representation z of FedDecorr Sec. 3) and a module
by its ``named_modules()`` name."""
from __future__ import annotations

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
