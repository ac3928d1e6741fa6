"""Small CNN (the FedAvg paper's two conv layers), for any image size and channel count;
``cnn-bn`` is the same network with BatchNorm before each ReLU, as MobileNetV2 and ResNet
have it (the last one right before the representation), for the ladder's rung that takes
BatchNorm into the small network (docs/scale.md)."""
from __future__ import annotations

import torch
import torch.nn as nn

from . import MODELS


class CNN(nn.Module):
    def __init__(self, num_classes: int, input_shape: tuple[int, ...], width: int = 32, feature_dim: int = 256,
                 batch_norm: bool = False):
        super().__init__()
        c, h, w = input_shape if len(input_shape) == 3 else (1, *input_shape)
        # the plain network's module indices stay as they were (stored runs' state keys)
        norm = (lambda n: [nn.BatchNorm2d(n)]) if batch_norm else (lambda n: [])
        self.features = nn.Sequential(
            nn.Conv2d(c, width, 3, padding=1, bias=not batch_norm), *norm(width), nn.ReLU(),
            nn.MaxPool2d(2) if h >= 4 else nn.Identity(),
            nn.Conv2d(width, 2 * width, 3, padding=1, bias=not batch_norm), *norm(2 * width), nn.ReLU(),
            nn.MaxPool2d(2) if h >= 8 else nn.Identity(),
            nn.AdaptiveAvgPool2d(4 if min(h, w) >= 16 else 2), nn.Flatten(),
        )
        with torch.no_grad():
            flat = self.features(torch.zeros(1, c, h, w)).shape[1]
        self.head = nn.Sequential(nn.Linear(flat, feature_dim, bias=not batch_norm),
                                  *([nn.BatchNorm1d(feature_dim)] if batch_norm else []), nn.ReLU())
        self.feature_dim = feature_dim
        self.classifier = nn.Linear(feature_dim, num_classes)
        self._chw = (c, h, w)

    def forward(self, x: torch.Tensor):
        z = self.head(self.features(x.view(x.shape[0], *self._chw)))
        return self.classifier(z), z


@MODELS.register("cnn")
def cnn(num_classes: int, input_shape, width: int = 32, feature_dim: int = 256) -> CNN:
    return CNN(num_classes, input_shape, width, feature_dim)


@MODELS.register("cnn-bn")
def cnn_bn(num_classes: int, input_shape, width: int = 32, feature_dim: int = 256) -> CNN:
    return CNN(num_classes, input_shape, width, feature_dim, batch_norm=True)
