"""Domain heterogeneity: client k holds all training samples of domain k (journal Sec. 5.3)."""
from __future__ import annotations

import numpy as np

from ..errors import CollapseLabError
from .base import Partition
from . import PARTITIONS


@PARTITIONS.register("domain")
def domain(labels: np.ndarray, num_classes: int, num_clients: int, rng: np.random.Generator,
           domains: np.ndarray | None = None) -> Partition:
    if domains is None:
        raise CollapseLabError("--partition domain needs a data set with domains (--dataset domains)")
    domains = np.asarray(domains)
    n_dom = int(domains.max()) + 1
    if num_clients != n_dom:
        raise CollapseLabError(f"--partition domain has one client per domain: use --clients {n_dom} (got {num_clients})")
    return Partition.from_indices([np.flatnonzero(domains == d) for d in range(n_dom)], np.asarray(labels), num_classes)
