"""The spectra's defaults, importable without torch (the command line reads them for its help)."""
from __future__ import annotations

TOP = 100  # singular values kept in a record, and the k of the top-k measures (the papers plot the top 100)
DEFAULT_TAU = 1e-2  # the paper's significance threshold, log10 tau = -2 (ICLR Sec. 3.1)
DEFAULT_REL = 1e-2  # the scale-free threshold on sigma_k / sigma_1 (the same two decades as tau)
