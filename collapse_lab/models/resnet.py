"""ResNets: ResNet-18 and ResNet-50 (He et al. 2016, basic and bottleneck blocks [2, 2, 2, 2]
and [3, 4, 6, 3], with the CIFAR stem: one 3x3 convolution, no max pooling; 512-d and
2048-d z; 32x32 and 64x64 inputs) and the CIFAR ResNet-20/32 (three stages of 16/32/64
channels, 64-d z). FedUV (Table 5) does not say which stem its ResNet-50 has; the CIFAR
stem matches the ResNet-18 the papers use on the same images.

ResNet-20/32 are the released FedDecorr code's (``networks/resnetcifar.py``, after He et al.
2016 Sec. 4.2): parameter-free "option A" shortcuts (stride 2 by subsampling, new channels
zero-padded) and Kaiming-normal initial weights of every convolution and linear layer;
269,722 and 464,154 parameters with 10 classes. Their first revision in collapse-lab had
1x1-convolution projection shortcuts (option B, +2,752 parameters); it lives on as
``resnet20-proj``/``resnet32-proj`` and still loads the runs stored with it (their
run.json has no ``model_revision``, which reads as revision 1)."""
from __future__ import annotations

import re

import torch.nn as nn
import torch.nn.functional as F

from . import MODELS


class PadShortcut(nn.Module):
    """Option A (He et al. 2016): every second pixel, the new channels zero (half before,
    half after), no parameters."""

    def __init__(self, in_planes: int, planes: int, stride: int):
        super().__init__()
        self.stride, self.before = stride, (planes - in_planes) // 2
        self.after = planes - in_planes - self.before

    def forward(self, x):
        return F.pad(x[:, :, ::self.stride, ::self.stride], (0, 0, 0, 0, self.before, self.after))


class BasicBlock(nn.Module):
    def __init__(self, in_planes: int, planes: int, stride: int = 1, shortcut: str = "projection"):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if (stride != 1 or in_planes != planes) and shortcut == "pad":
            self.shortcut = PadShortcut(in_planes, planes, stride)
        elif stride != 1 or in_planes != planes:  # option B, as the released ResNet-18 has it
            self.shortcut = nn.Sequential(nn.Conv2d(in_planes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3 (stride here, as torchvision's v1.5), 1x1 expand x4."""

    expansion = 4

    def __init__(self, in_planes: int, planes: int, stride: int = 1, shortcut: str = "projection"):
        super().__init__()
        out = planes * self.expansion
        self.body = nn.Sequential(nn.Conv2d(in_planes, planes, 1, bias=False), nn.BatchNorm2d(planes), nn.ReLU(),
                                  nn.Conv2d(planes, planes, 3, stride, 1, bias=False), nn.BatchNorm2d(planes), nn.ReLU(),
                                  nn.Conv2d(planes, out, 1, bias=False), nn.BatchNorm2d(out))
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != out:
            self.shortcut = nn.Sequential(nn.Conv2d(in_planes, out, 1, stride, bias=False), nn.BatchNorm2d(out))

    def forward(self, x):
        return F.relu(self.body(x) + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self, widths: list[int], blocks: list[int], num_classes: int, in_channels: int = 3,
                 block: type = BasicBlock, shortcut: str = "projection"):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, widths[0], 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        stages, in_planes = [], widths[0]
        for i, (w, n) in enumerate(zip(widths, blocks)):
            for s in [1 if i == 0 else 2] + [1] * (n - 1):
                stages.append(block(in_planes, w, s, shortcut))
                in_planes = w * getattr(block, "expansion", 1)
        self.layers = nn.Sequential(*stages)
        self.feature_dim = in_planes
        self.classifier = nn.Linear(in_planes, num_classes)

    def forward(self, x):
        out = self.layers(F.relu(self.bn1(self.conv1(x))))
        # Adaptive pooling: the same network serves 32x32 and 64x64 inputs.
        z = F.adaptive_avg_pool2d(out, 1).flatten(1)
        return self.classifier(z), z


@MODELS.register("resnet18")
def resnet18(num_classes: int, input_shape) -> ResNet:
    return ResNet([64, 128, 256, 512], [2, 2, 2, 2], num_classes, input_shape[0])


@MODELS.register("resnet50")
def resnet50(num_classes: int, input_shape) -> ResNet:
    return ResNet([64, 128, 256, 512], [3, 4, 6, 3], num_classes, input_shape[0], Bottleneck)


def _released_init(model: ResNet) -> ResNet:
    """The released CIFAR ResNets' initial weights: Kaiming normal (fan in, gain sqrt 2) for
    every convolution and linear layer; biases and BatchNorm keep PyTorch's."""
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.kaiming_normal_(m.weight)
    return model


def _released_names(blocks: int):
    """The released code's parameter names (networks/resnetcifar.py: ``layer1.0.conv1.weight``,
    a module per stage) -> ours (``layers.0.conv1.weight``, the blocks in one Sequential):
    the same network, so ``collapse-lab import --model resnet20`` reads its checkpoints."""
    rx = re.compile(r"^layer([1-9])\.(\d+)\.")

    def rename(key: str) -> str:
        m = rx.match(key)
        if m is None:
            return key
        stage, block = int(m.group(1)) - 1, int(m.group(2))
        return f"layers.{stage * blocks + block}." + key[m.end():]

    return rename


@MODELS.register("resnet20", revision=2, earlier={1: "resnet20-proj"}, foreign_names=_released_names(3))
def resnet20(num_classes: int, input_shape) -> ResNet:
    return _released_init(ResNet([16, 32, 64], [3, 3, 3], num_classes, input_shape[0], shortcut="pad"))


@MODELS.register("resnet32", revision=2, earlier={1: "resnet32-proj"}, foreign_names=_released_names(5))
def resnet32(num_classes: int, input_shape) -> ResNet:
    return _released_init(ResNet([16, 32, 64], [5, 5, 5], num_classes, input_shape[0], shortcut="pad"))


@MODELS.register("resnet20-proj")
def resnet20_proj(num_classes: int, input_shape) -> ResNet:
    """ResNet-20 with projection shortcuts (collapse-lab's first revision of ``resnet20``)."""
    return ResNet([16, 32, 64], [3, 3, 3], num_classes, input_shape[0])


@MODELS.register("resnet32-proj")
def resnet32_proj(num_classes: int, input_shape) -> ResNet:
    """ResNet-32 with projection shortcuts (collapse-lab's first revision of ``resnet32``)."""
    return ResNet([16, 32, 64], [5, 5, 5], num_classes, input_shape[0])
