"""scikit-learn's bundled 8x8 digits: the embedded default data set (no download).

The images are read from the file scikit-learn ships (``sklearn/datasets/data/digits.csv.gz``,
what ``sklearn.datasets.load_digits`` reads) without importing scikit-learn, whose import
(scipy.stats with it) costs seconds in every process that trains. The train/test split is
the one ``train_test_split(test_size=0.2, stratify=y, random_state=0)`` gives (taken from
scikit-learn 1.9.1), kept here as data: it is part of the data set, and no scikit-learn release moves
it (tests/data/test_loaders.py compares it with the installed scikit-learn's)."""
from __future__ import annotations

import gzip
import importlib.util
from pathlib import Path

import numpy as np
import torch

from .base import Dataset
from . import DATASETS
from ..errors import CollapseLabError

TEST_ROWS = (  # bit i (most significant first): row i of digits.csv.gz is a test image
    "000004883524104000064100934205001a00080100240028062c12001000940a009019120420f8a0028110a000080a882044"
    "1524494240a00a0000004004d80000818020004805c400104008a0100005404800301000020ec409000224840083a8013c20"
    "a6980a0000000b08400804a0184802024041c1008004404684376a810216004480004042a0a4180a5000840b8561c6081080"
    "08004c80c02004068e00010882008100380803c008190000100e01008410a0210033282904c044c080680e01028300820088"
    "22a6402c24042108a860809081a00c02820242120138a41500"
)


def digits_file() -> Path:
    """scikit-learn's digits.csv.gz, found without importing scikit-learn."""
    spec = importlib.util.find_spec("sklearn")
    path = Path(list(spec.submodule_search_locations)[0]) / "datasets" / "data" / "digits.csv.gz" if spec else None
    if path is None or not path.is_file():
        raise CollapseLabError("the digits data set is read from scikit-learn's datasets/data/digits.csv.gz, which is "
                               "not installed here; pip install scikit-learn")
    return path


def held_out_rows(n: int) -> np.ndarray:
    """The boolean mask of the test rows (``TEST_ROWS``) for a file of ``n`` rows."""
    bits = np.unpackbits(np.frombuffer(bytes.fromhex("".join(TEST_ROWS)), dtype=np.uint8))
    if n != 1797 or bits[n:].any():
        raise CollapseLabError(f"scikit-learn's digits.csv.gz has {n} rows, not the 1,797 of the digits data set")
    return bits[:n].astype(bool)


@DATASETS.register("digits", shape=(1, 8, 8), classes=10, model="mlp")
def load_digits() -> Dataset:
    with gzip.open(digits_file(), "rt") as f:
        data = np.loadtxt(f, delimiter=",")
    x = data[:, :-1].reshape(-1, 8, 8).astype(np.uint8)[:, None, :, :]  # values 0..16, shape (N, 1, 8, 8)
    y = data[:, -1].astype(np.int64)
    test = held_out_rows(len(y))
    idx_tr, idx_te = np.flatnonzero(~test), np.flatnonzero(test)
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
