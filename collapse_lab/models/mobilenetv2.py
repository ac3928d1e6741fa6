"""MobileNetV2, CIFAR variant (Sandler et al. 2018), as in the MOON / FedDecorr code.

Changes from the ImageNet network for 32x32 inputs: the stem is a stride-1 3x3 conv and
the second stage has stride 1. The representation z is the 1280-d global average of the
last 1x1 conv block.
"""
from __future__ import annotations

import torch.nn as nn
import torch.nn.functional as F

from . import MODELS

# (expansion, out_planes, num_blocks, stride)
CFG = [(1, 16, 1, 1), (6, 24, 2, 1), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


class Block(nn.Module):
    def __init__(self, in_planes: int, out_planes: int, expansion: int, stride: int):
        super().__init__()
        planes = expansion * in_planes
        self.stride = stride
        self.conv1 = nn.Conv2d(in_planes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, groups=planes, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, out_planes, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out_planes)
        self.shortcut = nn.Sequential()
        if stride == 1 and in_planes != out_planes:
            self.shortcut = nn.Sequential(nn.Conv2d(in_planes, out_planes, 1, bias=False), nn.BatchNorm2d(out_planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return out + self.shortcut(x) if self.stride == 1 else out


class MobileNetV2(nn.Module):
    def __init__(self, num_classes: int, in_channels: int = 3):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 32, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(32)
        blocks, in_planes = [], 32
        for expansion, out_planes, n, stride in CFG:
            for s in [stride] + [1] * (n - 1):
                blocks.append(Block(in_planes, out_planes, expansion, s))
                in_planes = out_planes
        self.layers = nn.Sequential(*blocks)
        self.conv2 = nn.Conv2d(320, 1280, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(1280)
        self.feature_dim = 1280
        self.classifier = nn.Linear(1280, num_classes)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layers(out)
        out = F.relu(self.bn2(self.conv2(out)))
        z = F.adaptive_avg_pool2d(out, 1).flatten(1)
        return self.classifier(z), z


@MODELS.register("mobilenetv2")
def mobilenetv2(num_classes: int, input_shape) -> MobileNetV2:
    return MobileNetV2(num_classes, in_channels=input_shape[0])
