"""Regularizers on the batch representations z, added to the local loss as ``CE + beta * R``
(Eq. 9 of the FedDecorr paper), keyed by the ``--reg`` name.

Each entry is a ``RegSpec``: a factory ``(num_classes, normalization, **options) ->
callable(z, logits) -> scalar`` (or None for ``none``), its options with the papers'
values as defaults, and the default ``beta``. ``resolve_options`` fills the defaults in,
so a run's configuration records every value it used.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..options import resolve_numeric
from ..registry import Registry

REGULARIZERS: Registry = Registry("regularizer")


@dataclass(frozen=True)
class RegSpec:
    factory: Callable
    defaults: dict = field(default_factory=dict)  # None: derived from the class count, see ``derive``
    beta: float = 0.1
    derive: Callable | None = None  # (options, num_classes) -> options with the None values filled in
    # No host synchronisation and no data-dependent shapes, so a CUDA graph can hold it
    # (fl.graphed); FedUV's median over the nonzero distances is not.
    graph_safe: bool = True


def register(name: str, defaults: dict | None = None, beta: float = 0.1, derive: Callable | None = None,
             graph_safe: bool = True):
    def deco(fn):
        REGULARIZERS.register(name)(RegSpec(fn, dict(defaults or {}), beta, derive, graph_safe))
        return fn

    return deco


def default_beta(name: str) -> float:
    return REGULARIZERS.get(name).beta


def resolve_options(name: str, given: dict, num_classes: int | None = None) -> dict:
    spec = REGULARIZERS.get(name)
    out = resolve_numeric("regularizer", name, spec.defaults, given)
    if spec.derive is not None and num_classes is not None:
        out = spec.derive(out, num_classes)
    return out


def build_regularizer(name: str, normalization: str = "paper", num_classes: int | None = None, **options):
    spec = REGULARIZERS.get(name)
    return spec.factory(num_classes=num_classes, normalization=normalization,
                        **resolve_options(name, options, num_classes))


@register("none")
def none(**_):
    return None


from . import decov, feddecorr, feduv  # noqa: E402,F401

__all__ = ["REGULARIZERS", "build_regularizer", "default_beta", "resolve_options"]
