"""Small in-memory data sets for tests (files in their on-disk formats are in conftest.py)."""
from __future__ import annotations

import numpy as np
import torch

from collapse_lab.data import Dataset


def random_images(n_train: int, n_test: int, seed: int, classes: int = 10) -> Dataset:
    """CIFAR-shaped uint8 images with uniform labels (speed and equality tests need no content)."""
    rng = np.random.default_rng(seed)
    x = torch.from_numpy(rng.integers(0, 256, size=(n_train + n_test, 3, 32, 32), dtype=np.uint8))
    y = torch.from_numpy(rng.integers(0, classes, size=n_train + n_test))
    return Dataset("random-images", x[:n_train], y[:n_train], x[n_train:], y[n_train:], num_classes=classes,
                   scale=255.0, mean=(0.49, 0.48, 0.45), std=(0.25, 0.24, 0.26))
