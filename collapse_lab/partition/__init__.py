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


def partition_options(name: str) -> list[str]:
    """The options partition ``name`` takes."""
    return option_names(PARTITIONS.get(name), skip=4)


def make_partition(cfg, ds) -> Partition:
    """A run's partition (``cfg`` a ``RunConfig``, ``ds`` its ``Dataset``): the options
    (``alpha``, ``min_size``, ...) are the run configuration's fields of those names,
    ``domains`` the data set's domain labels; the random stream is the run seed's
    partition stream. Training and the analysis (the partition figures) both draw it here."""
    rng = np.random.default_rng(seed_for(cfg.seed, PURPOSE_PARTITION))
    opts = {k: (None if ds.train_domain is None else ds.train_domain.numpy()) if k == "domains" else getattr(cfg, k)
            for k in partition_options(cfg.partition)}
    return PARTITIONS.call(cfg.partition, ds.train_y.numpy(), ds.num_classes, cfg.clients, rng, **opts)


__all__ = ["PARTITIONS", "Partition", "label_entropy", "make_partition", "partition_options"]
