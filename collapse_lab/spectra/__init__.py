"""Covariance spectra of representations and the metrics derived from them (pure functions)."""
from .functional import (covariance, effective_rank, local_global_gap, n_significant, numerical_floor, spectrum,
                         variance_share)

__all__ = ["covariance", "spectrum", "numerical_floor", "n_significant", "effective_rank", "variance_share",
           "local_global_gap"]
