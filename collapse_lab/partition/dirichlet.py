"""Dirichlet label skew (Sec. 3.1 of the FedDecorr paper; the MOON/NIID-Bench procedure)."""
from __future__ import annotations

import math

import numpy as np

from ..errors import CollapseLabError
from .base import Partition
from . import PARTITIONS

# The released codes redraw without a limit; at K = 20, alpha = 0.01 on 10,000 CIFAR-10 labels
# they need 2,553 to 19,049 draws (seeds 0-2, about 1 ms each).
MAX_ATTEMPTS = 100_000


def iid(labels: np.ndarray, num_clients: int, rng: np.random.Generator) -> list[np.ndarray]:
    """alpha = inf: a random permutation cut into K equal shards (sizes differ by at most 1)."""
    return list(np.array_split(rng.permutation(len(labels)), num_clients))


def _attempt(class_idx: list[np.ndarray], num_clients: int, alpha: float, rng, cap: float,
             released: bool = False, min_size: int = 0) -> list[np.ndarray] | None:
    """One draw: per class (in order) its indices shuffled and cut by p ~ Dir_K(alpha); None
    where the draw fails (every client with weight full, or a client under ``min_size``).
    The clients' lists are assembled only for a draw that is kept: the random numbers drawn
    are the same either way (thousands of draws at small alpha)."""
    sizes = np.zeros(num_clients, dtype=np.int64)
    cut_classes = []
    for idx in class_idx:
        idx_c = idx.copy()
        rng.shuffle(idx_c)
        p = rng.dirichlet(np.full(num_clients, alpha))
        # A client already holding >= N/K samples gets no more (keeps sizes bounded).
        p = p * (sizes < cap)
        total = p.sum()
        n_c = len(idx_c)
        if not np.isfinite(total) or total <= 0:
            # Every client with weight is full (small alpha: most weights underflow to 0).
            if not released:
                return None  # this draw failed: redraw all
            # The released code divides by 0 and casts the NaN cuts to int (INT_MIN on x86),
            # so np.split hands the whole class to the last client, and the draw goes on.
            bounds = np.zeros(num_clients + 1, dtype=np.int64)
        else:
            bounds = np.empty(num_clients + 1, dtype=np.int64)
            bounds[0] = 0
            bounds[1:-1] = (np.cumsum(p / total) * n_c).astype(np.int64)[:-1]
        bounds[-1] = n_c
        sizes += np.diff(bounds)
        cut_classes.append((idx_c, bounds))
    if sizes.min() < min_size:
        return None
    return [np.concatenate([idx_c[b[k]:b[k + 1]] for idx_c, b in cut_classes]) for k in range(num_clients)]


@PARTITIONS.register("dirichlet", released_rng=True)
def dirichlet(labels: np.ndarray, num_classes: int, num_clients: int, rng: np.random.Generator,
              alpha: float = 0.5, min_size: int = 10) -> Partition:
    """Per class c: p_c ~ Dir_K(alpha); client k gets a p_{c,k} share of class c.

    Clients already holding >= N/K samples get a zero share (renormalised); the whole
    draw is repeated until every client holds >= ``min_size`` samples, at most
    ``MAX_ATTEMPTS`` times. ``alpha = inf`` is the IID split.

    The procedure of MOON's, NIID-Bench's and FedDecorr's ``partition_data`` (noniid /
    noniid-labeldir; homo for IID). The run option ``--partition-option rng=...`` picks the
    random numbers (``make_partition``): ``default`` the run seed's partition stream
    (``seeds.PURPOSE_PARTITION``, a ``Generator``); ``released`` the legacy global stream the
    released codes draw from after ``np.random.seed(seed)``, a ``RandomState(seed)``, which
    gives the released code's clients for the same seed, index set for index set. Handed a
    ``RandomState``, the split also follows the released code where it divides by zero. The
    released code's final shuffle of each client's list is left out: indices are stored sorted.
    """
    released = isinstance(rng, np.random.RandomState)
    labels = np.asarray(labels)
    if not alpha > 0:
        raise CollapseLabError(f"--alpha must be > 0 (got {alpha}); use inf for IID")
    if num_clients < 1:
        raise CollapseLabError(f"--clients must be >= 1 (got {num_clients})")
    if num_clients * max(min_size, 1) > len(labels):
        raise CollapseLabError(
            f"{num_clients} clients x --min-size {min_size} needs {num_clients * max(min_size, 1)} samples but the training set has {len(labels)}; use fewer clients or a smaller --min-size")
    if math.isinf(alpha):
        return Partition.from_indices(iid(labels, num_clients, rng), labels, num_classes)
    class_idx = [np.flatnonzero(labels == c) for c in range(num_classes)]
    for _ in range(MAX_ATTEMPTS):
        parts = _attempt(class_idx, num_clients, alpha, rng, len(labels) / num_clients, released, min_size)
        if parts is not None and min(len(p) for p in parts) >= min_size:
            return Partition.from_indices(parts, labels, num_classes)
    raise CollapseLabError(
        f"no Dirichlet(alpha={alpha}) split of {len(labels)} samples over {num_clients} clients gave every client >= {min_size} samples in {MAX_ATTEMPTS} draws; lower --min-size, use fewer clients or a larger alpha")
