"""Random crop with zero padding and random horizontal flip, batched
(torchvision's ``RandomCrop(size, padding=4)`` and ``RandomHorizontalFlip()`` per image)."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ..devices import to_device
from . import STEPS


def draw_crop(n: int, pad: int, generator: torch.Generator) -> torch.Tensor:
    """(n, 2) top/left offsets in [0, 2 pad] of the padded image."""
    return torch.randint(0, 2 * pad + 1, (n, 2), generator=generator)


def crop(x: torch.Tensor, offsets: torch.Tensor, pad: int) -> torch.Tensor:
    """Pad every image by ``pad`` zeros, cut the original size at its (top, left) offset."""
    b, c, h, w = x.shape
    if b == 0:
        return x.clone()
    xp = F.pad(x, (pad, pad, pad, pad))
    off = to_device(offsets, x.device)
    rows = (off[:, 0].view(b, 1) + torch.arange(h, device=x.device).view(1, h))  # (B, H)
    cols = (off[:, 1].view(b, 1) + torch.arange(w, device=x.device).view(1, w))  # (B, W)
    wp = w + 2 * pad
    idx = (rows.view(b, h, 1) * wp + cols.view(b, 1, w)).view(b, 1, h * w).expand(b, c, h * w)
    return xp.reshape(b, c, -1).gather(2, idx).view(b, c, h, w)


def draw_flip(n: int, generator: torch.Generator) -> torch.Tensor:
    return torch.rand(n, generator=generator) < 0.5


def flip(x: torch.Tensor, flags: torch.Tensor) -> torch.Tensor:
    return torch.where(to_device(flags, x.device).view(-1, 1, 1, 1), x.flip(3), x)


@STEPS.register("crop")
class RandomCrop:
    """Zero-pad 4 pixels, then a random 32x32 (input-sized) crop (FedDecorr's CIFAR pipeline)."""

    pad = 4

    def draw(self, n: int, generator: torch.Generator) -> torch.Tensor:
        return draw_crop(n, self.pad, generator)

    def apply(self, x: torch.Tensor, params: torch.Tensor) -> torch.Tensor:
        return crop(x, params, self.pad)


@STEPS.register("flip")
class RandomFlip:
    """Horizontal flip with probability 1/2."""

    def draw(self, n: int, generator: torch.Generator) -> torch.Tensor:
        return draw_flip(n, generator)

    def apply(self, x: torch.Tensor, params: torch.Tensor) -> torch.Tensor:
        return flip(x, params)
