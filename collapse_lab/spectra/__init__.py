"""Covariance spectra of representations and the metrics derived from them (pure functions).

The functions load torch, so they are imported when first asked for: the command line reads
``spectra.constants`` for its help without loading torch.
"""
from __future__ import annotations

__all__ = ["covariance", "spectrum", "numerical_floor", "n_significant", "effective_rank", "variance_share",
           "local_global_gap"]


def __getattr__(name: str):
    if name in __all__:
        from . import functional

        return getattr(functional, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
