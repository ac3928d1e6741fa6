"""Partition registry: pure functions (labels, clients, rng, **options) -> Partition."""
from __future__ import annotations

from ..registry import Registry
from .base import Partition, label_entropy

PARTITIONS: Registry = Registry("partition")

from . import dirichlet, pathological, domain  # noqa: E402,F401

__all__ = ["PARTITIONS", "Partition", "label_entropy"]
