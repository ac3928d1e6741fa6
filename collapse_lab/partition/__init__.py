"""Partition registry: pure functions (labels, num_classes, num_clients, rng, **options) -> Partition.

A partition is one file here decorated ``@PARTITIONS.register(name)``; its keyword
options are named as the run configuration's fields (``alpha``, ``min_size``,
``classes_per_client``) or ``domains`` (the data set's domain of every sample), and the
engine hands it exactly the ones it names.
"""
from __future__ import annotations

from ..registry import Registry, option_names
from .base import Partition, label_entropy


def _check(name, fn, info) -> None:
    if option_names(fn)[:4] != ["labels", "num_classes", "num_clients", "rng"]:
        raise TypeError(f"partition {name}: take (labels, num_classes, num_clients, rng, *options)")


PARTITIONS: Registry = Registry("partition", __name__, flag="--partition", check=_check)


def partition_options(name: str) -> list[str]:
    """The options partition ``name`` takes."""
    return option_names(PARTITIONS.get(name), skip=4)


__all__ = ["PARTITIONS", "Partition", "label_entropy", "partition_options"]
