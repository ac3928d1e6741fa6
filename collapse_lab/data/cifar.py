"""CIFAR-10 and CIFAR-100 from the standard python-version folders.

The official python version stores batches as pickles. We read them with an unpickler
that only admits the handful of numpy/builtin constructors those files use, so a
crafted file cannot run code.
"""
from __future__ import annotations

import io
import pickle
from pathlib import Path

import numpy as np
import torch

from ..errors import CollapseLabError
from .base import Dataset
from .files import require_root, torchvision_download
from . import DATASETS

_ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("builtins", "dict"),
    ("builtins", "list"),
    ("_codecs", "encode"),  # protocol-2 pickles spell bytes this way
}

# Channel statistics of the training sets (the constants used by the MOON/FedDecorr code).
STATS = {
    "cifar10": ((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)),
    "cifar100": ((0.5071, 0.4865, 0.4409), (0.2673, 0.2564, 0.2762)),
}


class _SafeUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refusing {module}.{name}: not part of a CIFAR batch")


def read_batch(path: Path) -> dict:
    try:
        with open(path, "rb") as f:
            d = _SafeUnpickler(io.BytesIO(f.read()), encoding="bytes").load()
    except OSError as e:
        raise CollapseLabError(f"{path} cannot be read ({e.strerror or type(e).__name__})") from None
    except Exception as e:  # noqa: BLE001 -- any failure of a crafted or damaged pickle (an allowed constructor misused)
        why = str(e).splitlines()[0][:120] if str(e) else type(e).__name__
        raise CollapseLabError(f"{path} is not a readable CIFAR batch ({why}); re-download it") from None
    if not isinstance(d, dict):
        raise CollapseLabError(f"{path} is not a CIFAR batch (it holds a {type(d).__name__}, not a dict); re-download it")
    return {(k.decode(errors="replace") if isinstance(k, bytes) else k): v for k, v in d.items()}


def _images(d: dict, path: Path) -> torch.Tensor:
    if "data" not in d:
        raise CollapseLabError(f"{path} is not a CIFAR batch (no 'data' entry); re-download it")
    try:
        x = np.asarray(d["data"])
    except (ValueError, TypeError) as e:
        raise CollapseLabError(f"{path}: 'data' is not an array ({e}); re-download it") from None
    if x.dtype != np.uint8 or x.ndim != 2 or x.shape[1] != 3072:
        raise CollapseLabError(f"{path}: expected uint8 data of shape (N, 3072), found {x.dtype} {x.shape}; "
                               "re-download it")
    return torch.from_numpy(x.reshape(-1, 3, 32, 32).copy())


def _labels(d: dict, key: str, path: Path, n: int, num_classes: int) -> torch.Tensor:
    """The batch's labels: ``n`` whole numbers in [0, num_classes)."""
    if key not in d:
        raise CollapseLabError(f"{path} has no '{key}' entry (the labels); re-download it")
    try:
        y = np.asarray(d[key])
    except (ValueError, TypeError):
        y = np.asarray([], dtype=object)
    if y.ndim != 1 or len(y) != n or not np.issubdtype(y.dtype, np.integer):
        raise CollapseLabError(f"{path}: '{key}' must be {n} whole-number labels (found {y.dtype} of shape "
                               f"{y.shape}); re-download it")
    if len(y) and (y.min() < 0 or y.max() >= num_classes):
        raise CollapseLabError(f"{path}: labels must lie in 0..{num_classes - 1} (found {y.min()}..{y.max()}); "
                               "re-download it")
    return torch.from_numpy(y.astype(np.int64))


def _load(name: str, folder: str, train_files: list[str], test_file: str, label_key: str,
          meta_file: str, names_key: str, num_classes: int, data_root, download) -> Dataset:
    layout = f"the folder {folder}/ ({', '.join(train_files + [test_file])})"
    root = require_root(name, data_root, layout)
    base = root / folder
    if download and not base.is_dir():
        torchvision_download(name, root, layout)
    missing = [f for f in train_files + [test_file] if not (base / f).is_file()]
    if missing:
        raise CollapseLabError(f"{name}: {', '.join(missing)} not found in {base}: put {layout} under {root} (or use --download)")
    xs, ys = [], []
    for f in train_files:
        d = read_batch(base / f)
        xs.append(_images(d, base / f))
        ys.append(_labels(d, label_key, base / f, len(xs[-1]), num_classes))
    dt = read_batch(base / test_file)
    x_test = _images(dt, base / test_file)
    y_test = _labels(dt, label_key, base / test_file, len(x_test), num_classes)
    class_names = []
    if (base / meta_file).is_file():
        names = read_batch(base / meta_file).get(names_key)
        if not isinstance(names, list) or len(names) != num_classes:
            raise CollapseLabError(f"{base / meta_file}: '{names_key}' must list {num_classes} class names; re-download it")
        class_names = [n.decode(errors="replace") if isinstance(n, bytes) else str(n) for n in names]
    mean, std = STATS[name]
    return Dataset(name, torch.cat(xs), torch.cat(ys), x_test, y_test, num_classes=num_classes,
                   scale=255.0, mean=mean, std=std, class_names=class_names)


# FedDecorr Sec. 5.1 and its code: 100 rounds, weight decay 1e-5 for CIFAR-10 (1e-4 elsewhere), crop (4-pixel
# zero padding) + flip; CIFAR-100 the same followed by AutoAugment.
@DATASETS.register("cifar10", shape=(3, 32, 32), classes=10, model="mobilenetv2", augment="crop+flip", paper=dict(rounds=100, weight_decay=1e-5),
                   cpu=dict(model="cnn", dataset_options=dict(max_train_per_class=1000, max_test_per_class=200)))
def load_cifar10(data_root=None, download: bool = False) -> Dataset:
    return _load("cifar10", "cifar-10-batches-py", [f"data_batch_{i}" for i in range(1, 6)], "test_batch",
                 "labels", "batches.meta", "label_names", 10, data_root, download)


@DATASETS.register("cifar100", shape=(3, 32, 32), classes=100, model="mobilenetv2", augment="crop+flip+autoaugment", paper=dict(rounds=100))
def load_cifar100(data_root=None, download: bool = False) -> Dataset:
    return _load("cifar100", "cifar-100-python", ["train"], "test", "fine_labels", "meta",
                 "fine_label_names", 100, data_root, download)
