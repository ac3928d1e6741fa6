"""The data set record every loader returns."""
from __future__ import annotations

from dataclasses import dataclass, field

import torch


@dataclass
class Dataset:
    """Train/test tensors with integer labels.

    ``train_x``/``test_x`` keep their stored dtype (uint8 for images: 4x smaller, and
    the form a data set is held in on the device); ``to_float`` turns a batch into the
    normalised float input a model takes.
    """

    name: str
    train_x: torch.Tensor
    train_y: torch.Tensor
    test_x: torch.Tensor
    test_y: torch.Tensor
    num_classes: int
    scale: float = 1.0  # stored value / scale lies in [0, 1] for images
    mean: tuple[float, ...] = (0.0,)
    std: tuple[float, ...] = (1.0,)
    class_names: list[str] = field(default_factory=list)
    # Domain data sets: the domain index of every sample and the domain names.
    train_domain: torch.Tensor | None = None
    test_domain: torch.Tensor | None = None
    domains: list[str] = field(default_factory=list)
    _stats: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for split in ("train", "test"):
            x, y = getattr(self, f"{split}_x"), getattr(self, f"{split}_y")
            if len(x) != len(y):
                raise ValueError(f"{self.name}: {split} has {len(x)} inputs but {len(y)} labels")
        self.train_y = self.train_y.long()
        self.test_y = self.test_y.long()

    @property
    def input_shape(self) -> tuple[int, ...]:
        return tuple(self.train_x.shape[1:])

    def to_float(self, x: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """The normalised input, computed in ``dtype`` (float64 for the analyses' features:
        float32 here would round the input, and CUDA divides by a scalar through its
        reciprocal, so CPU and GPU inputs would differ in the last float32 bit)."""
        x = x.to(dtype) / self.scale
        if x.dim() == 4:  # images: per-channel normalisation
            mean, std = self._channel_stats(x.device, dtype)
        else:
            mean, std = self.mean[0], self.std[0]
        return (x - mean) / std

    def _channel_stats(self, device: torch.device, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        # Made once per device: a tensor built from Python numbers on CUDA is a copy that
        # makes the host wait for the GPU, at every batch, and cannot be captured in a graph.
        key = (device, dtype)
        if key not in self._stats:
            self._stats[key] = (torch.tensor(self.mean, dtype=dtype, device=device).view(1, -1, 1, 1),
                                torch.tensor(self.std, dtype=dtype, device=device).view(1, -1, 1, 1))
        return self._stats[key]
