"""Synthetic class-conditional Gaussians, for theory checks and fast tests."""
from __future__ import annotations

import numpy as np
import torch

from ..errors import CollapseLabError
from .base import Dataset
from . import DATASETS


@DATASETS.register("gaussian", model="mlp")
def load_gaussian(
    dim: int = 32,
    num_classes: int = 10,
    train_per_class: int = 200,
    test_per_class: int = 50,
    separation: float = 3.0,
    data_seed: int = 0,
) -> Dataset:
    """x = mu_c + eps, mu_c ~ N(0, (separation^2/dim) I), eps ~ N(0, I).

    The class means and samples are drawn from ``data_seed`` alone, so the data set is
    the same for every run seed.
    """
    if dim < 1 or num_classes < 2 or train_per_class < 1 or test_per_class < 1:
        raise CollapseLabError("gaussian needs dim >= 1, num_classes >= 2 and at least 1 sample per class")
    rng = np.random.default_rng(data_seed)
    means = rng.normal(0.0, separation / np.sqrt(dim), size=(num_classes, dim))

    def draw(per_class: int):
        y = np.repeat(np.arange(num_classes), per_class)
        x = means[y] + rng.normal(size=(len(y), dim))
        return torch.from_numpy(x.astype(np.float32)), torch.from_numpy(y)

    xtr, ytr = draw(train_per_class)
    xte, yte = draw(test_per_class)
    return Dataset(
        name="gaussian",
        train_x=xtr,
        train_y=ytr,
        test_x=xte,
        test_y=yte,
        num_classes=num_classes,
        class_names=[str(i) for i in range(num_classes)],
    )
