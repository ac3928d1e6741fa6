"""Fixtures that write tiny data sets in their real on-disk formats."""
from __future__ import annotations

import gzip
import os
import pickle
import struct
from pathlib import Path

import numpy as np
import pytest

SHARED_MNIST = Path(__file__).resolve().parents[2] / "shared" / "data" / "mnist"


def pytest_configure(config):
    """Under pytest-xdist (``pytest -n 2``) each worker takes its share of the cores for torch
    and for the commands its tests start: two workers each with torch's default (every
    core) would oversubscribe the machine and run slower than one."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers > 1 and os.environ.get("PYTEST_XDIST_WORKER"):
        share = str(max(1, (os.cpu_count() or 1) // workers))
        os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = share
        import torch

        torch.set_num_threads(int(share))


def pytest_addoption(parser):
    parser.addoption("--auto-precision", choices=("fp32", "bf16"), default=None,
                     help="What --precision auto gives on the CPU in this process's tests (default: fp32, as "
                          "shipped). bf16 runs the bf16 CPU path through every test that does not state "
                          "@pytest.mark.precision('fp32') (issue 47; .ci/run runs the fast subset so).")


@pytest.fixture(autouse=True)
def _auto_precision(request, monkeypatch):
    """With ``--auto-precision bf16``, ``auto`` trains bf16 autocast on the CPU in process
    (tests that compare with fp32 references, run names or released outputs say
    ``@pytest.mark.precision("fp32")`` and keep fp32)."""
    forced = request.config.getoption("--auto-precision")
    mark = request.node.get_closest_marker("precision")
    if forced is None or (mark is not None and mark.args[0] != forced):
        yield
        return
    from collapse_lab.runspec import speed

    real = speed.resolve_precision
    monkeypatch.setattr(speed, "resolve_precision",
                        lambda spec, device: forced if spec == "auto" and device.type == "cpu" else real(spec, device))
    yield


def write_idx(path: Path, arr: np.ndarray, gz: bool) -> None:
    """The idx format: 0, 0, dtype code (0x08 = uint8), ndim, big-endian uint32 dims, data."""
    header = bytes([0, 0, 0x08, arr.ndim]) + struct.pack(f">{arr.ndim}I", *arr.shape)
    data = header + arr.astype(np.uint8).tobytes()
    if gz:
        path = path.with_name(path.name + ".gz")
        with gzip.open(path, "wb") as f:
            f.write(data)
    else:
        path.write_bytes(data)


@pytest.fixture
def mnist_root(tmp_path):
    rng = np.random.default_rng(0)
    root = tmp_path / "mnist_root" / "MNIST" / "raw"
    root.mkdir(parents=True)
    for prefix, n, gz in (("train", 60, True), ("t10k", 20, False)):
        x = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        y = np.arange(n) % 10
        write_idx(root / f"{prefix}-images-idx3-ubyte", x, gz)
        write_idx(root / f"{prefix}-labels-idx1-ubyte", y.astype(np.uint8), gz)
    return tmp_path / "mnist_root", x, y


def write_cifar(root: Path, kind: str, n_per_file: int = 20) -> dict:
    """CIFAR python version: pickled dicts with bytes keys (as written by Python 2)."""
    rng = np.random.default_rng(1)
    folder, files, label_key, n_cls = {
        "cifar10": ("cifar-10-batches-py", [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"], b"labels", 10),
        "cifar100": ("cifar-100-python", ["train", "test"], b"fine_labels", 100),
    }[kind]
    base = root / folder
    base.mkdir(parents=True)
    written = {}
    for f in files:
        data = rng.integers(0, 256, size=(n_per_file, 3072), dtype=np.uint8)
        labels = [int(v) for v in rng.integers(0, n_cls, size=n_per_file)]
        d = {b"data": data, label_key: labels, b"batch_label": f.encode()}
        if kind == "cifar100":
            d[b"coarse_labels"] = [v // 5 for v in labels]
        with open(base / f, "wb") as fh:
            pickle.dump(d, fh, protocol=2)
        written[f] = (data, labels)
    meta = ("batches.meta", b"label_names") if kind == "cifar10" else ("meta", b"fine_label_names")
    with open(base / meta[0], "wb") as fh:
        pickle.dump({meta[1]: [f"class{i}".encode() for i in range(n_cls)]}, fh, protocol=2)
    return written


@pytest.fixture
def cifar_root(tmp_path):
    """A CIFAR-10 fixture in the python-pickle format: 100 training and 20 test images."""
    root = tmp_path / "cifar_root"
    write_cifar(root, "cifar10")
    return root


QUICK = Path(__file__).with_name("quick.txt")  # written by tests/choose_quick.py


def pytest_collection_modifyitems(config, items):
    """``quick``: the edit-run subset, the tests tests/choose_quick.py measured as cheapest
    (tests/quick.txt); a ``slow`` test is never in it."""
    chosen = {ln for ln in QUICK.read_text().splitlines() if ln and not ln.startswith("#")} if QUICK.exists() else set()
    for item in items:
        if item.nodeid in chosen and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.quick)
