"""Capped data sets do not depend on the files' order: a CIFAR-10 copy whose images lie in
another order (across batch files too) gives the same subset and byte-identical runs; a cap
larger than a class, or a class missing, is one line and nothing is written."""
from __future__ import annotations

import hashlib
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from collapse_lab.cli import cli
from collapse_lab.data import load_dataset

PER_CLASS, TEST_PER_CLASS = 12, 4


def _images(seed: int = 3):
    """A balanced CIFAR-10-sized set: PER_CLASS training and TEST_PER_CLASS test images a class."""
    rng = np.random.default_rng(seed)
    y_tr = np.repeat(np.arange(10), PER_CLASS)
    y_te = np.repeat(np.arange(10), TEST_PER_CLASS)
    x_tr = rng.integers(0, 256, size=(len(y_tr), 3072), dtype=np.uint8)
    x_te = rng.integers(0, 256, size=(len(y_te), 3072), dtype=np.uint8)
    return x_tr, y_tr, x_te, y_te


def write_copy(root: Path, order_seed: int | None, drop_class: int | None = None) -> Path:
    """The official python layout; ``order_seed`` permutes the images (None: class-sorted)."""
    x_tr, y_tr, x_te, y_te = _images()
    if drop_class is not None:
        x_tr, y_tr = x_tr[y_tr != drop_class], y_tr[y_tr != drop_class]
    if order_seed is not None:
        rng = np.random.default_rng(order_seed)
        p, q = rng.permutation(len(y_tr)), rng.permutation(len(y_te))
        x_tr, y_tr, x_te, y_te = x_tr[p], y_tr[p], x_te[q], y_te[q]
    base = root / "cifar-10-batches-py"
    base.mkdir(parents=True)
    for i, part in enumerate(np.array_split(np.arange(len(y_tr)), 5)):
        with open(base / f"data_batch_{i + 1}", "wb") as fh:
            pickle.dump({b"data": x_tr[part], b"labels": [int(v) for v in y_tr[part]],
                         b"batch_label": b"x"}, fh, protocol=2)
    with open(base / "test_batch", "wb") as fh:
        pickle.dump({b"data": x_te, b"labels": [int(v) for v in y_te], b"batch_label": b"t"}, fh, protocol=2)
    with open(base / "batches.meta", "wb") as fh:
        pickle.dump({b"label_names": [f"class{i}".encode() for i in range(10)]}, fh, protocol=2)
    return root


CAPS = ["--dataset-option", "max_train_per_class=9", "--dataset-option", "max_test_per_class=3"]


def test_any_file_order_gives_the_same_subset(tmp_path):
    a = load_dataset("cifar10", data_root=write_copy(tmp_path / "a", None), max_train_per_class=9,
                     max_test_per_class=3)
    b = load_dataset("cifar10", data_root=write_copy(tmp_path / "b", 7), max_train_per_class=9, max_test_per_class=3)
    assert torch.equal(a.train_x, b.train_x) and torch.equal(a.train_y, b.train_y)
    assert torch.equal(a.test_x, b.test_x) and torch.equal(a.test_y, b.test_y)
    assert np.bincount(a.train_y.numpy()).tolist() == [9] * 10
    # uncapped, the files' order is kept (the released partitions' parity rests on it)
    full_a, full_b = load_dataset("cifar10", data_root=tmp_path / "a"), load_dataset("cifar10", data_root=tmp_path / "b")
    assert not torch.equal(full_a.train_y, full_b.train_y)


@pytest.mark.slow
def test_capped_runs_on_two_orders_are_byte_identical(tmp_path):
    digests = []
    for name, order in (("a", None), ("b", 11)):
        root = write_copy(tmp_path / name, order)
        store = tmp_path / f"store_{name}"
        res = CliRunner().invoke(cli, ["train", "--dataset", "cifar10", "--data-root", str(root), *CAPS, "--model",
                                       "cnn", "--clients", "3", "--alpha", "0.5", "--rounds", "2", "--local-epochs",
                                       "1", "--batch-size", "8", "--min-size", "1", "--store", str(store)])
        assert res.exit_code == 0, res.output
        files = sorted(p for p in store.rglob("*.safetensors") if ".features" not in p.parts)
        assert len(files) >= 2 * 4
        digests.append({p.relative_to(store).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in files})
    assert digests[0] == digests[1]


@pytest.mark.parametrize("caps,drop,msg", [
    (["--dataset-option", "max_train_per_class=13"], None, "class 0 (class0) has only 12 train samples"),
    (["--dataset-option", "max_test_per_class=5"], None, "has only 4 test samples"),
    (CAPS, 4, "has no train sample of class 4 (class4)"),
])
def test_a_cap_larger_than_a_class_or_a_class_missing_is_one_line(tmp_path, caps, drop, msg):
    root = write_copy(tmp_path / "d", 1, drop_class=drop)
    res = CliRunner().invoke(cli, ["train", "--dataset", "cifar10", "--data-root", str(root), *caps, "--model", "cnn",
                                   "--clients", "3", "--rounds", "1", "--store", str(tmp_path / "s")])
    assert res.exit_code == 2 and msg in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.output
    assert not (tmp_path / "s").exists()
