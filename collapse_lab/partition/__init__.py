"""Partition registry: pure functions (labels, num_classes, num_clients, rng, **options) -> Partition.

A partition is one file here decorated ``@PARTITIONS.register(name)``; its keyword
options are named as the run configuration's fields (``alpha``, ``min_size``,
``classes_per_client``) or ``domains`` (the data set's domain of every sample), and the
engine hands it exactly the ones it names.
"""
from __future__ import annotations

import numpy as np

from ..registry import Registry, option_names
from ..seeds import PURPOSE_PARTITION, seed_for
from .base import Partition, label_entropy


def _check(name, fn, info) -> None:
    if option_names(fn)[:4] != ["labels", "num_classes", "num_clients", "rng"]:
        raise TypeError(f"partition {name}: take (labels, num_classes, num_clients, rng, *options)")


PARTITIONS: Registry = Registry("partition", __name__, flag="--partition", check=_check)


# options every Dirichlet-like split shares: fields of the run configuration (and flags)
SHARED = ("alpha", "min_size", "classes_per_client")


def partition_options(name: str) -> list[str]:
    """The options partition ``name`` takes."""
    return option_names(PARTITIONS.get(name), skip=4)


def takes(name: str | None, option: str) -> bool:
    """Whether partition ``name`` takes ``option`` (``alpha``, ``classes_per_client``, ...):
    asked of the partition, never of its name. An unknown name (a run recorded from other
    code) takes none."""
    return name in PARTITIONS and option in partition_options(name)


RNGS = ("default", "released")


def own_options(name: str) -> list[str]:
    """The options a partition declares beyond the shared fields and the data set's domains:
    given as ``--partition-option KEY=VALUE`` (``partition_options`` of the run). ``rng``
    (default | released) where the partition replays the released codes' random stream
    (registered with ``released_rng=True``)."""
    own = [k for k in partition_options(name) if k not in SHARED and k != "domains"]
    return own + (["rng"] if PARTITIONS.info(name).get("released_rng") else [])


def make_partition(cfg, ds) -> Partition:
    """A run's partition (``cfg`` a ``RunConfig``, ``ds`` its ``Dataset``): the options
    (``alpha``, ``min_size``, ...) are the run configuration's fields of those names,
    ``domains`` the data set's domain labels; the random stream is the run seed's
    partition stream. Training and the analysis (the partition figures) both draw it here."""
    if cfg.partition_options.get("rng") == "released":
        # the released codes' legacy global stream after np.random.seed(seed) (dirichlet.py)
        rng = np.random.RandomState(cfg.seed % 2**32)
    else:
        rng = np.random.default_rng(seed_for(cfg.seed, PURPOSE_PARTITION))
    opts = {}
    for k in partition_options(cfg.partition):
        if k == "domains":
            opts[k] = None if ds.train_domain is None else ds.train_domain.numpy()
        elif k in SHARED:
            opts[k] = getattr(cfg, k)
        elif k in cfg.partition_options and k != "rng":
            opts[k] = cfg.partition_options[k]  # else the partition's own default
    return PARTITIONS.call(cfg.partition, ds.train_y.numpy(), ds.num_classes, cfg.clients, rng, **opts)


__all__ = ["PARTITIONS", "RNGS", "SHARED", "Partition", "label_entropy", "make_partition", "own_options", "partition_options",
           "takes"]
