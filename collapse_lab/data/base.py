"""The data set record every loader returns."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
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


def validation_split(ds: Dataset, fraction: float, seed: int = 0) -> Dataset:
    """The training set split into train and a held-out validation set that takes the
    test set's place (FedUV supp. Sec. 4 tunes on "a 90-10 split from the original training
    dataset": ``--dataset-option val_fraction=0.1``). Stratified: round(fraction * n_c) of
    every class c, drawn from a stream of its own that depends on ``seed`` alone (0 for
    every run: the runs of a sweep are compared on one validation set)."""
    from ..seeds import PURPOSE_VALIDATION, seed_for

    rng = np.random.default_rng(seed_for(seed, PURPOSE_VALIDATION))
    y = ds.train_y.numpy()
    val = np.sort(np.concatenate([rng.permutation(np.flatnonzero(y == c))[:int(round(fraction * (y == c).sum()))]
                                  for c in range(ds.num_classes)]))
    keep = np.setdiff1d(np.arange(len(y)), val)
    if len(val) == 0 or len(keep) == 0:
        raise ValueError(f"val_fraction {fraction} leaves {len(keep)} training and {len(val)} validation samples")
    val_t, keep_t = torch.from_numpy(val), torch.from_numpy(keep)
    dom = ds.train_domain
    return dataclasses.replace(
        ds, name=f"{ds.name} (validation split {fraction:g})", train_x=ds.train_x[keep_t], train_y=ds.train_y[keep_t],
        test_x=ds.train_x[val_t], test_y=ds.train_y[val_t],
        train_domain=None if dom is None else dom[keep_t], test_domain=None if dom is None else dom[val_t])


def _first_of_each(ds: Dataset, y: torch.Tensor, d: torch.Tensor | None, per: int) -> torch.Tensor:
    """Indices of the first ``per`` samples of every (domain, class) present, in stored order."""
    keys = y if d is None else d * ds.num_classes + y
    groups = [torch.nonzero(keys == k).flatten() for k in torch.unique(keys)]
    return torch.sort(torch.cat([g[:per] for g in groups])).values if groups else y[:0].long()


def _subset(ds: Dataset, tr: torch.Tensor, te: torch.Tensor) -> Dataset:
    return Dataset(ds.name, ds.train_x[tr], ds.train_y[tr], ds.test_x[te], ds.test_y[te], ds.num_classes, ds.scale,
                   ds.mean, ds.std, list(ds.class_names),
                   None if ds.train_domain is None else ds.train_domain[tr],
                   None if ds.test_domain is None else ds.test_domain[te], list(ds.domains))


def stratified_subset(ds: Dataset, train: int | None, test: int) -> Dataset:
    """The first samples of every (domain, class) in the stored order, about ``train`` and
    ``test`` of them in all (``train`` None keeps the training set whole): the small test set
    a smoke run evaluates on (``RunConfig.smoke``). Every group is kept while there are
    enough; with more groups than samples (TinyImageNet's 200 classes, DomainNet's 6 x 345)
    one sample of each of the first groups, the domains taking turns, so every domain stays."""

    def pick(y: torch.Tensor, d: torch.Tensor | None, n: int) -> torch.Tensor:
        keys = y if d is None else d * ds.num_classes + y
        groups = torch.unique(keys)
        if len(groups) <= n:
            return _first_of_each(ds, y, d, max(1, -(-n // max(len(groups), 1))))
        dom = groups // ds.num_classes  # groups are sorted, so a domain's groups are contiguous
        turn = torch.arange(len(groups)) - torch.searchsorted(groups, dom * ds.num_classes)  # rank within its domain
        chosen = groups[sorted(range(len(groups)), key=lambda i: (int(turn[i]), int(dom[i])))[:n]]
        return torch.sort(torch.stack([torch.nonzero(keys == k).flatten()[0] for k in chosen])).values

    tr = torch.arange(len(ds.train_y)) if train is None else pick(ds.train_y, ds.train_domain, train)
    return _subset(ds, tr, pick(ds.test_y, ds.test_domain, test))
