"""Regularizers on the batch representations z, added to the local loss as ``CE + beta * R``
(Eq. 9 of the FedDecorr paper). Each entry is a factory ``(**options) -> callable(z, logits) -> scalar``.
``none`` is the plain cross-entropy."""
from __future__ import annotations

from ..registry import Registry

REGULARIZERS: Registry = Registry("regularizer")

from . import feddecorr  # noqa: E402,F401


@REGULARIZERS.register("none")
def none(**_):
    return None


def build_regularizer(name: str, **options):
    return REGULARIZERS.get(name)(**options)


__all__ = ["REGULARIZERS", "build_regularizer"]
