"""Decoding image files into one uint8 tensor (N, 3, H, W)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from ..errors import CollapseLabError

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".gif", ".tif", ".tiff", ".webp"}


def list_images(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)


def decode(paths: list[Path], size: int | None) -> torch.Tensor:
    """RGB-decode every file; resize to size x size when given (else all must match)."""
    from PIL import Image

    out = []
    for p in paths:
        try:
            with Image.open(p) as im:
                im = im.convert("RGB")
                if size is not None and im.size != (size, size):
                    im = im.resize((size, size), Image.BILINEAR)
                a = np.asarray(im, dtype=np.uint8)
        except OSError as e:
            raise CollapseLabError(f"cannot decode image {p}: {e}") from None
        if out and a.shape != out[0].shape:
            raise CollapseLabError(f"{p} is {a.shape[1]}x{a.shape[0]} but earlier images are {out[0].shape[1]}x{out[0].shape[0]}; pass --image-size")
        out.append(a)
    if not out:
        return torch.zeros((0, 3, size or 1, size or 1), dtype=torch.uint8)
    return torch.from_numpy(np.stack(out)).permute(0, 3, 1, 2).contiguous()


def channel_stats(x: torch.Tensor) -> tuple[tuple[float, ...], tuple[float, ...]]:
    xf = x.double() / 255.0
    return tuple(xf.mean(dim=(0, 2, 3)).tolist()), tuple(xf.std(dim=(0, 2, 3)).tolist())
