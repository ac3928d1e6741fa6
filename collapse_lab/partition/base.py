"""The partition record: per-client index arrays, a clients x classes count matrix, a content hash."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..tensor_files import load_tensors, save_tensors


@dataclass(frozen=True)
class Partition:
    client_indices: tuple[np.ndarray, ...]  # int64 indices into the training set, one array per client
    counts: np.ndarray  # (clients, classes) int64

    @staticmethod
    def from_indices(client_indices, labels: np.ndarray, num_classes: int) -> "Partition":
        idx = tuple(np.sort(np.asarray(ix, dtype=np.int64)) for ix in client_indices)
        counts = np.stack([np.bincount(labels[ix], minlength=num_classes) for ix in idx]).astype(np.int64)
        return Partition(idx, counts)

    @property
    def num_clients(self) -> int:
        return len(self.client_indices)

    @property
    def sizes(self) -> np.ndarray:
        return np.array([len(ix) for ix in self.client_indices], dtype=np.int64)

    def content_hash(self) -> str:
        """sha256 over the clients' sorted index arrays (little-endian int64) and their lengths."""
        h = hashlib.sha256()
        for ix in self.client_indices:
            h.update(np.int64(len(ix)).astype("<i8").tobytes())
            h.update(ix.astype("<i8").tobytes())
        return h.hexdigest()

    def save(self, path: Path, fault=None) -> None:
        flat = np.concatenate(self.client_indices) if self.client_indices else np.zeros(0, np.int64)
        save_tensors(path, {"indices": torch.from_numpy(flat), "sizes": torch.from_numpy(self.sizes),
                            "counts": torch.from_numpy(self.counts)}, metadata={"sha256": self.content_hash()},
                     **({"fault": fault} if fault is not None else {}))

    @staticmethod
    def load(path: Path) -> "Partition":
        t = load_tensors(path)
        flat, sizes = t["indices"].numpy(), t["sizes"].numpy()
        parts = tuple(np.split(flat, np.cumsum(sizes)[:-1])) if len(sizes) else ()
        return Partition(parts, t["counts"].numpy())


def check_classes_per_client(m: int, num_classes: int, num_clients: int) -> None:
    """M classes per client must exist, and K clients x M classes must cover every class."""
    from ..errors import CollapseLabError

    if not 1 <= m <= num_classes:
        raise CollapseLabError(f"--classes-per-client must be between 1 and {num_classes} (got {m})")
    if num_clients * m < num_classes:
        raise CollapseLabError(f"{num_clients} clients x {m} classes cannot cover {num_classes} classes; raise "
                               f"--classes-per-client to >= {-(-num_classes // num_clients)} or use more clients")


def label_entropy(counts: np.ndarray) -> np.ndarray:
    """Shannon entropy (nats) of each client's label distribution."""
    p = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.where(p > 0, p * np.log(p), 0.0).sum(axis=1)
