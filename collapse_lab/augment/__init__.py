"""Training-time augmentation of whole uint8 batches on the training device.

A pipeline is a '+'-joined list of registered steps, applied in order, e.g.
``crop+flip+autoaugment`` (the FedDecorr code's CIFAR-100 pipeline); ``none`` is the
empty one and ``auto`` the paper's choice for the data set (declared where the data set
registers, ``augment=``). Each
step draws its random numbers on the CPU from the generator it is given (so a run
augments identically on CPU and GPU, and a resumed run identically to an uninterrupted
one) and transforms the batch with tensor operations only.

Adding a step is one file here with a ``@STEPS.register("name")`` class with ``draw``
and ``apply``.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..errors import CollapseLabError
from ..registry import Registry

STEPS: Registry = Registry("augmentation step", __name__, flag="--augment")


def resolve(spec: str, auto: str = "none") -> str:
    """Normalise an augmentation spec ('auto' -> ``auto``, the data set's choice); raises on unknown steps."""
    spec = (spec or "none").strip().lower()
    if spec == "auto":
        spec = auto
    if spec == "none":
        return "none"
    names = [s.strip() for s in spec.split("+")]
    for s in names:
        if s not in STEPS:
            raise CollapseLabError(f"--augment {spec!r}: unknown step {s!r}; use none, auto or steps joined by '+' "
                                   f"from: {', '.join(STEPS.names())}")
    return "+".join(names)


@dataclass
class Pipeline:
    """The steps of a resolved spec; ``__call__`` augments a uint8 batch (B, C, H, W)."""

    spec: str

    def __post_init__(self) -> None:
        self.steps = [] if self.spec == "none" else [STEPS.get(s)() for s in self.spec.split("+")]

    def __bool__(self) -> bool:
        return bool(self.steps)

    def __call__(self, x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        if x.dim() != 4:
            raise CollapseLabError(f"augmentation {self.spec!r} needs images (N, C, H, W), got shape {tuple(x.shape)}; "
                                   "use --augment none for this data set")
        for step in self.steps:
            x = step.apply(x, step.draw(len(x), generator))
        return x


__all__ = ["STEPS", "Pipeline", "resolve"]
