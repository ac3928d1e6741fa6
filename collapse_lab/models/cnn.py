"""Small CNN (the FedAvg paper's two conv layers), for any image size and channel count."""
from __future__ import annotations

import torch
import torch.nn as nn

from . import MODELS


class CNN(nn.Module):
    def __init__(self, num_classes: int, input_shape: tuple[int, ...], width: int = 32, feature_dim: int = 256):
        super().__init__()
        c, h, w = input_shape if len(input_shape) == 3 else (1, *input_shape)
        self.features = nn.Sequential(
            nn.Conv2d(c, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2) if h >= 4 else nn.Identity(),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2) if h >= 8 else nn.Identity(),
            nn.AdaptiveAvgPool2d(4 if min(h, w) >= 16 else 2), nn.Flatten(),
        )
        with torch.no_grad():
            flat = self.features(torch.zeros(1, c, h, w)).shape[1]
        self.head = nn.Sequential(nn.Linear(flat, feature_dim), nn.ReLU())
        self.feature_dim = feature_dim
        self.classifier = nn.Linear(feature_dim, num_classes)
        self._chw = (c, h, w)

    def forward(self, x: torch.Tensor):
        z = self.head(self.features(x.view(x.shape[0], *self._chw)))
        return self.classifier(z), z


@MODELS.register("cnn")
def cnn(num_classes: int, input_shape, width: int = 32, feature_dim: int = 256) -> CNN:
    return CNN(num_classes, input_shape, width, feature_dim)
