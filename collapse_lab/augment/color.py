"""Batched uint8 colour operations with Pillow's integer arithmetic.

The official FedDecorr AutoAugment calls ``PIL.ImageOps`` and ``PIL.ImageEnhance`` per
image; these functions compute the same pixels for a whole batch (B, 3, H, W) at once,
each with a per-image parameter. Pillow's rules reproduced here: grayscale is
(19595 R + 38470 G + 7471 B + 2^15) >> 16; ``Image.blend`` works in float32 and truncates;
the SMOOTH filter is [[1,1,1],[1,5,1],[1,1,1]]/13, rounded, border pixels unchanged.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ..devices import to_device


def _per_image(v: torch.Tensor, x: torch.Tensor, dtype=torch.float32) -> torch.Tensor:
    return to_device(v.to(dtype), x.device).view(-1, *([1] * (x.dim() - 1)))


def grayscale(x: torch.Tensor) -> torch.Tensor:
    """Pillow's RGB -> L conversion (ITU-R 601-2 in 16-bit fixed point), (B, 1, H, W) int32."""
    xi = x.to(torch.int32)
    return (19595 * xi[:, 0:1] + 38470 * xi[:, 1:2] + 7471 * xi[:, 2:3] + 0x8000) >> 16


def blend(degenerate: torch.Tensor, x: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    """``Image.blend(degenerate, x, factor)``: d + f (x - d) in float32, clipped, truncated."""
    f = _per_image(factor, x)
    d = degenerate.to(torch.float32)
    out = d + f * (x.to(torch.float32) - d)
    return out.clamp(0, 255).to(torch.uint8)  # float -> uint8 truncates, as the C cast does


def brightness(x: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    return blend(torch.zeros_like(x), x, factor)


def color(x: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    return blend(grayscale(x).expand_as(x), x, factor)


def contrast(x: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    """Blend with the image's mean grey level, rounded to an integer (ImageEnhance.Contrast)."""
    g = grayscale(x).to(torch.float64)
    mean = torch.floor(g.mean(dim=(1, 2, 3)) + 0.5)
    return blend(mean.view(-1, 1, 1, 1).expand_as(x), x, factor)


def smooth(x: torch.Tensor) -> torch.Tensor:
    """Pillow's ImageFilter.SMOOTH; the one-pixel border keeps its values."""
    b, c, h, w = x.shape
    if h < 3 or w < 3:
        return x.clone()
    k = torch.ones(3, 3, dtype=torch.float32, device=x.device)
    k[1, 1] = 5.0
    k = (k / 13.0).view(1, 1, 3, 3).expand(c, 1, 3, 3)
    inner = F.conv2d(x.to(torch.float32), k, groups=c)
    out = x.clone()
    out[:, :, 1:-1, 1:-1] = torch.floor(inner.clamp(0, 255) + 0.5).to(torch.uint8)
    return out


def sharpness(x: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    return blend(smooth(x), x, factor)


def invert(x: torch.Tensor, _=None) -> torch.Tensor:
    return 255 - x


def solarize(x: torch.Tensor, threshold: torch.Tensor) -> torch.Tensor:
    """Pixels at or above the (per-image, real-valued) threshold are inverted."""
    t = _per_image(threshold, x, torch.float64)
    return torch.where(x.to(torch.float64) < t, x, 255 - x)


def posterize(x: torch.Tensor, bits: torch.Tensor) -> torch.Tensor:
    """Keep the top ``bits`` bits of every channel value."""
    mask = (256 - (1 << (8 - to_device(bits.to(torch.int32), x.device)))).view(-1, 1, 1, 1)
    return (x.to(torch.int32) & mask).to(torch.uint8)


def autocontrast(x: torch.Tensor, _=None) -> torch.Tensor:
    """Per image and channel, stretch [lo, hi] to [0, 255]: int(v * 255/(hi-lo) - lo * 255/(hi-lo))."""
    b, c = x.shape[:2]
    flat = x.reshape(b, c, -1)
    lo = flat.amin(dim=2).to(torch.float64).view(b, c, 1)
    hi = flat.amax(dim=2).to(torch.float64).view(b, c, 1)
    # a true division: ``255.0 / tensor`` would compute 255 * (1 / d), one rounding more
    # than Python's 255.0 / d, and flip int() at exact levels such as 255
    scale = torch.full_like(hi, 255.0) / torch.where(hi > lo, hi - lo, torch.ones_like(hi))
    out = torch.trunc(flat.to(torch.float64) * scale + (-lo * scale)).clamp(0, 255).to(torch.uint8)
    return torch.where(hi > lo, out, flat).view_as(x)


def equalize(x: torch.Tensor, _=None) -> torch.Tensor:
    """ImageOps.equalize per image and channel: lut[i] = (step // 2 + #pixels below i) // step
    with step = (#pixels - count of the highest level) // 255; identity when step is 0."""
    b, c = x.shape[:2]
    flat = x.reshape(b * c, -1).to(torch.int64)
    hist = torch.zeros(b * c, 256, dtype=torch.int64, device=x.device).scatter_add_(1, flat, torch.ones_like(flat))
    levels = torch.arange(256, device=x.device)
    top = torch.where(hist > 0, levels, -1).amax(dim=1, keepdim=True)
    last = hist.gather(1, top)
    step = (flat.shape[1] - last) // 255
    below = hist.cumsum(1) - hist
    lut = ((step // 2 + below) // step.clamp(min=1)).clamp(max=255)
    out = lut.gather(1, flat)
    keep = (step == 0)  # also covers a single level: then everything sits at the top
    return torch.where(keep, flat, out).to(torch.uint8).view_as(x)
