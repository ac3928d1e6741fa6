"""Model registry. Every model's ``forward(x)`` returns ``(logits, z)`` where ``z`` is the
penultimate representation fed to the last linear layer ``model.classifier``; its width
is ``model.feature_dim``."""
from __future__ import annotations

import torch.nn as nn

from ..registry import Registry

MODELS: Registry = Registry("model")

from . import mlp, cnn, linear, mobilenetv2, resnet  # noqa: E402,F401


def build_model(name: str, num_classes: int, input_shape: tuple[int, ...], **options) -> nn.Module:
    return MODELS.get(name)(num_classes=num_classes, input_shape=tuple(input_shape), **options)


__all__ = ["MODELS", "build_model"]
