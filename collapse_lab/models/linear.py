"""Deep linear network (no biases, no nonlinearity), the model of the FedDecorr gradient-flow analysis.

With L hidden layers W_1..W_L and the classifier W_{L+1}: z = W_L ... W_1 x and
logits = W_{L+1} z (Sec. 3.3.1 / App. A of the FedDecorr paper).
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn

from . import MODELS


class DeepLinear(nn.Module):
    def __init__(self, num_classes: int, input_shape: tuple[int, ...], depth: int = 2, width: int = 64):
        super().__init__()
        dims = [math.prod(input_shape)] + [width] * depth
        self.layers = nn.ModuleList(nn.Linear(a, b, bias=False) for a, b in zip(dims[:-1], dims[1:]))
        self.feature_dim = width
        self.classifier = nn.Linear(width, num_classes, bias=False)

    def forward(self, x: torch.Tensor):
        z = x.flatten(1)
        for layer in self.layers:
            z = layer(z)
        return self.classifier(z), z


@MODELS.register("linear")
def linear(num_classes: int, input_shape, depth: int = 2, width: int = 64) -> DeepLinear:
    return DeepLinear(num_classes, input_shape, depth, width)
