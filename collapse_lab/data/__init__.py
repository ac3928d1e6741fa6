"""Data set registry. ``load_dataset(name, data_root=..., download=...)`` returns a Dataset."""
from __future__ import annotations

from pathlib import Path

from ..registry import Registry
from .base import Dataset

DATASETS: Registry = Registry("data set")

# Importing registers each loader (one file per data set).
from . import digits, gaussian, mnist, cifar, tinyimagenet, domains  # noqa: E402,F401


def load_dataset(name: str, data_root: str | Path | None = None, download: bool = False, **options) -> Dataset:
    loader = DATASETS.get(name)
    return loader(data_root=Path(data_root) if data_root else None, download=download, **options)


__all__ = ["DATASETS", "Dataset", "load_dataset"]
