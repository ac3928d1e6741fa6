"""scikit-learn's bundled 8x8 digits: the embedded default data set (no download)."""
from __future__ import annotations

import numpy as np
import torch

from .base import Dataset
from . import DATASETS

TEST_FRACTION = 0.2
SPLIT_SEED = 0  # fixed: the split is part of the data set, not of a run


@DATASETS.register("digits", shape=(1, 8, 8), classes=10, model="mlp")
def load_digits() -> Dataset:
    from sklearn.datasets import load_digits as sk_digits
    from sklearn.model_selection import train_test_split

    d = sk_digits()
    x = d.images.astype(np.uint8)[:, None, :, :]  # values 0..16, shape (N, 1, 8, 8)
    y = d.target.astype(np.int64)
    idx_tr, idx_te = train_test_split(
        np.arange(len(y)), test_size=TEST_FRACTION, stratify=y, random_state=SPLIT_SEED
    )
    idx_tr.sort()
    idx_te.sort()
    xs = x.astype(np.float64) / 16.0
    return Dataset(
        name="digits",
        train_x=torch.from_numpy(x[idx_tr]),
        train_y=torch.from_numpy(y[idx_tr]),
        test_x=torch.from_numpy(x[idx_te]),
        test_y=torch.from_numpy(y[idx_te]),
        num_classes=10,
        scale=16.0,
        mean=(float(xs[idx_tr].mean()),),
        std=(float(xs[idx_tr].std()),),
        class_names=[str(i) for i in range(10)],
    )
