"""MNIST from the standard idx files (raw or .gz), as distributed by LeCun et al."""
from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np
import torch

from ..errors import CollapseLabError
from .base import Dataset
from .files import find_first, require_root, torchvision_download
from . import DATASETS

FILES = {
    ("train", "x"): "train-images-idx3-ubyte",
    ("train", "y"): "train-labels-idx1-ubyte",
    ("test", "x"): "t10k-images-idx3-ubyte",
    ("test", "y"): "t10k-labels-idx1-ubyte",
}
LAYOUT = "the four idx files (train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz], t10k-images-idx3-ubyte[.gz], t10k-labels-idx1-ubyte[.gz]) in DIR, DIR/mnist or DIR/MNIST/raw"
# Pixel statistics of the MNIST training set (the usual normalisation constants).
MEAN, STD = 0.1307, 0.3081

_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path: Path) -> np.ndarray:
    """Parse an idx file: 2 zero bytes, dtype code, ndim, then big-endian uint32 dims."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] not in _DTYPES:
        raise CollapseLabError(f"{path} is not an idx file (bad magic number); re-download it")
    ndim = data[3]
    dims = struct.unpack(f">{ndim}I", data[4 : 4 + 4 * ndim])
    dtype = np.dtype(_DTYPES[data[2]])
    body = np.frombuffer(data, dtype=dtype, offset=4 + 4 * ndim)
    if body.size != int(np.prod(dims)):
        raise CollapseLabError(f"{path} is truncated: expected {int(np.prod(dims))} values, found {body.size}")
    return body.reshape(dims)


def _locate(root: Path, stem: str) -> Path | None:
    dirs = [root, root / "mnist", root / "MNIST" / "raw", root / "MNIST"]
    return find_first([d / (stem + ext) for d in dirs for ext in (".gz", "")])


def has_split(root: Path, split: str) -> bool:
    return _locate(root, FILES[(split, "x")]) is not None and _locate(root, FILES[(split, "y")]) is not None


def read_split(root: Path, split: str, required: bool = True):
    px, py = _locate(root, FILES[(split, "x")]), _locate(root, FILES[(split, "y")])
    if px is None or py is None:
        if not required:
            return None
        raise CollapseLabError(f"MNIST {split} files not found under {root}: put {LAYOUT} (or use --download)")
    x, y = read_idx(px), read_idx(py)
    if len(x) != len(y):
        raise CollapseLabError(f"MNIST {split}: {len(x)} images but {len(y)} labels; the files do not belong together")
    return torch.from_numpy(x.copy()).unsqueeze(1), torch.from_numpy(y.astype(np.int64))


@DATASETS.register("mnist", shape=(1, 28, 28), classes=10, model="cnn")
def load_mnist(data_root: Path | None = None, download: bool = False, test_only: bool = False) -> Dataset:
    """``test_only``: the test files serve as both splits (for analyses that train
    nothing on it, e.g. ``theory`` on a copy of the test set alone)."""
    root = require_root("mnist", data_root, LAYOUT)
    if download and _locate(root, FILES[("train", "x")]) is None:
        torchvision_download("mnist", root, LAYOUT)
    train = None if test_only else read_split(root, "train")
    xte, yte = read_split(root, "test")
    xtr, ytr = (xte, yte) if test_only else train
    return Dataset("mnist", xtr, ytr, xte, yte, num_classes=10, scale=255.0, mean=(MEAN,), std=(STD,),
                   class_names=[str(i) for i in range(10)])
