"""AutoAugment's CIFAR-10 policy (Cubuk et al. 2018) as the FedDecorr code applies it to
CIFAR-100 and TinyImageNet (its ``data_aug_utils.AutoAugment``, ported from
4uiiurz1/pytorch-auto-augment), batched.

Per image: one of 25 sub-policies uniformly; each of its two operations runs with its
probability; magnitude index m selects the interval [v_m, v_{m+1}] of an 11-point grid
and the value is drawn uniformly inside it (so for the signed operations, low m means a
negative shear/translation/rotation). Geometric operations resample with cubic splines
about the centre with zero fill (``geometric.affine_spline``); the others are Pillow's
(``color``). ``draw`` takes every random number on the CPU, so a batch augments the same
on any device, and ``apply`` has no per-image Python.
"""
from __future__ import annotations

import math

import torch

from ..devices import to_device
from . import STEPS
from . import color
from .geometric import affine_spline, centred

# (operation, probability, magnitude index) x 2, in the official code's order.
POLICY = (
    (("Invert", 0.1, 7), ("Contrast", 0.2, 6)),
    (("Rotate", 0.7, 2), ("TranslateX", 0.3, 9)),
    (("Sharpness", 0.8, 1), ("Sharpness", 0.9, 3)),
    (("ShearY", 0.5, 8), ("TranslateY", 0.7, 9)),
    (("AutoContrast", 0.5, 8), ("Equalize", 0.9, 2)),
    (("ShearY", 0.2, 7), ("Posterize", 0.3, 7)),
    (("Color", 0.4, 3), ("Brightness", 0.6, 7)),
    (("Sharpness", 0.3, 9), ("Brightness", 0.7, 9)),
    (("Equalize", 0.6, 5), ("Equalize", 0.5, 1)),
    (("Contrast", 0.6, 7), ("Sharpness", 0.6, 5)),
    (("Color", 0.7, 7), ("TranslateX", 0.5, 8)),
    (("Equalize", 0.3, 7), ("AutoContrast", 0.4, 8)),
    (("TranslateY", 0.4, 3), ("Sharpness", 0.2, 6)),
    (("Brightness", 0.9, 6), ("Color", 0.2, 8)),
    (("Solarize", 0.5, 2), ("Invert", 0.0, 3)),
    (("Equalize", 0.2, 0), ("AutoContrast", 0.6, 0)),
    (("Equalize", 0.2, 8), ("Equalize", 0.6, 4)),
    (("Color", 0.9, 9), ("Equalize", 0.6, 6)),
    (("AutoContrast", 0.8, 4), ("Solarize", 0.2, 8)),
    (("Brightness", 0.1, 3), ("Color", 0.7, 0)),
    (("Solarize", 0.4, 5), ("AutoContrast", 0.9, 3)),
    (("TranslateY", 0.9, 9), ("TranslateY", 0.7, 9)),
    (("AutoContrast", 0.9, 2), ("Solarize", 0.8, 3)),
    (("Equalize", 0.8, 8), ("Invert", 0.1, 3)),
    (("TranslateY", 0.7, 9), ("AutoContrast", 0.9, 1)),
)

# The 11-point magnitude grid of each operation (None: the operation takes no magnitude).
GRID = {
    "ShearX": (-0.3, 0.3), "ShearY": (-0.3, 0.3),
    "TranslateX": (-150 / 331, 150 / 331), "TranslateY": (-150 / 331, 150 / 331),
    "Rotate": (-30.0, 30.0), "Solarize": (0.0, 256.0), "Posterize": (4.0, 8.0),
    "Contrast": (0.1, 1.9), "Color": (0.1, 1.9), "Brightness": (0.1, 1.9), "Sharpness": (0.1, 1.9),
    "AutoContrast": None, "Invert": None, "Equalize": None,
}
OPS = tuple(GRID)
GEOMETRIC = ("ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate")


def magnitude(op: str, index: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """uniform(v[index], v[index + 1]) of the operation's grid, u in [0, 1) (float64)."""
    if GRID[op] is None:
        return torch.zeros_like(u, dtype=torch.float64)
    lo, hi = GRID[op]
    step = (hi - lo) / 10
    a = lo + step * index.to(torch.float64)
    return a + (step * u.to(torch.float64))


def geometric_matrix(op: str, mag: torch.Tensor, h: int, w: int) -> torch.Tensor:
    """(B, 3, 3) transform matrices of the official code, before centring."""
    n = len(mag)
    m = torch.eye(3, dtype=torch.float64).repeat(n, 1, 1)
    if op == "ShearX":
        m[:, 0, 1] = mag
    elif op == "ShearY":
        m[:, 1, 0] = mag
    elif op == "TranslateX":
        m[:, 1, 2] = w * mag
    elif op == "TranslateY":
        m[:, 0, 2] = h * mag
    elif op == "Rotate":
        th = mag * (math.pi / 180.0)
        m[:, 0, 0], m[:, 0, 1] = th.cos(), -th.sin()
        m[:, 1, 0], m[:, 1, 1] = th.sin(), th.cos()
    else:
        raise ValueError(op)
    return m


def apply_op(op: str, x: torch.Tensor, mag: torch.Tensor) -> torch.Tensor:
    """One operation on a batch, magnitude per image (already drawn)."""
    if op in GEOMETRIC:
        a, off = centred(geometric_matrix(op, mag.cpu(), x.shape[2], x.shape[3]), x.shape[2], x.shape[3])
        return affine_spline(x, a, off)
    if op == "Posterize":
        return color.posterize(x, torch.round(mag).to(torch.int32))
    fn = {"Solarize": color.solarize, "Contrast": color.contrast, "Color": color.color,
          "Brightness": color.brightness, "Sharpness": color.sharpness, "AutoContrast": color.autocontrast,
          "Invert": color.invert, "Equalize": color.equalize}[op]
    return fn(x, mag)


_OP_ID = torch.tensor([[OPS.index(op) for op, _, _ in sub] for sub in POLICY])
_PROB = torch.tensor([[p for _, p, _ in sub] for sub in POLICY], dtype=torch.float64)
_MAG = torch.tensor([[m for _, _, m in sub] for sub in POLICY])


def draw(n: int, generator: torch.Generator) -> dict[str, torch.Tensor]:
    """All random numbers for n images (CPU): sub-policy, whether each operation runs and
    the position inside its magnitude interval."""
    sub = torch.randint(len(POLICY), (n,), generator=generator)
    u = torch.rand(n, 2, generator=generator, dtype=torch.float64)
    v = torch.rand(n, 2, generator=generator, dtype=torch.float64)
    return {"sub": sub, "run": u < _PROB[sub], "v": v}


def apply(x: torch.Tensor, params: dict[str, torch.Tensor]) -> torch.Tensor:
    """Apply drawn sub-policies to uint8 images (B, C, H, W): for each of the two slots,
    every operation runs once on the images that chose it."""
    out = x.clone()
    sub = params["sub"]
    for slot in range(2):
        op_id, mag_idx = _OP_ID[sub, slot], _MAG[sub, slot]
        for k, op in enumerate(OPS):
            sel = torch.nonzero(params["run"][:, slot] & (op_id == k)).flatten()
            if len(sel) == 0:
                continue
            mag = magnitude(op, mag_idx[sel], params["v"][sel, slot])
            idx = to_device(sel, x.device)
            out[idx] = apply_op(op, out[idx], mag)
    return out


@STEPS.register("autoaugment")
class AutoAugment:
    """FedDecorr's CIFAR AutoAugment policy (``draw``/``apply`` above)."""

    def draw(self, n: int, generator: torch.Generator) -> dict:
        return draw(n, generator)

    def apply(self, x: torch.Tensor, params: dict) -> torch.Tensor:
        return apply(x, params)
