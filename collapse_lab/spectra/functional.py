"""Spectra of representation covariance matrices, in float64.

FedDecorr Sec. 3.1: Sigma = (1/N) sum_i (z_i - z_bar)(z_i - z_bar)^T over the N test
points, and its singular values in descending order. Sigma is symmetric positive
semi-definite, so its singular values are its eigenvalues; we use the symmetric
eigensolver, clamp round-off negatives to 0 and report the numerical floor below which
values are indistinguishable from 0.
"""
from __future__ import annotations

import torch

from ..linalg import covariance, covariance_spectrum, numerical_floor
from .constants import DEFAULT_REL, DEFAULT_TAU  # noqa: F401  (re-exported: their home is constants)


# The covariance and its spectrum live in ``linalg`` (training logs a probe spectrum each
# round, and the training loop sits below the analyses); the analyses use the same functions.
spectrum = covariance_spectrum


def n_significant(sv: torch.Tensor, tau: float = DEFAULT_TAU) -> int:
    """Number of singular values above tau (Sec. 3.1: 'significant' when > tau)."""
    return int((sv > tau).sum())


def n_relative(sv: torch.Tensor, rho: float = DEFAULT_REL) -> int:
    """Number of singular values with sigma_k / sigma_1 > rho: ``n_significant`` with tau
    scaled by the largest value, so the count reads the spectrum's shape at any scale
    (0 for an all-zero spectrum)."""
    top = float(sv.max()) if len(sv) else 0.0
    return 0 if top <= 0 else int((sv.to(torch.float64) / top > rho).sum())


def tail_share(sv: torch.Tensor, top: int) -> float:
    """Share of the trace (the sum of every singular value) in the tail half of the top
    ``top``, indices top//2 < k <= top (1-based): scale-free, unlike the tail's mean log."""
    s = sv.to(torch.float64)
    total = float(s.sum())
    k = min(top, len(s))
    return float(s[k // 2:k].sum()) / total if total > 0 else 0.0


def tail_mean(sv: torch.Tensor, floor: float) -> float:
    """Mean log10 singular value over the tail half of ``sv`` (indices len//2 < k <= len,
    1-based), each floored as ``log10_safe``."""
    k = len(sv)
    half = log10_safe(sv.to(torch.float64), floor)[k // 2:]
    return float(half.mean()) if len(half) else 0.0


def effective_rank(sv: torch.Tensor, floor: float = 0.0) -> float:
    """Effective rank of Roy & Vetterli (2007): exp(H(p)), p_k = s_k / sum s, over values above the floor.

    Equals the rank for a flat spectrum of any size, 1 for a rank-one matrix.
    """
    s = sv[sv > floor].to(torch.float64)
    if len(s) == 0:
        return 0.0
    p = s / s.sum()
    return float(torch.exp(-(p * p.log()).sum()))


def variance_share(sv: torch.Tensor, k: int) -> float:
    """Share of the total variance (trace of Sigma) in the top k singular values."""
    total = float(sv.sum())
    return float(sv[:k].sum()) / total if total > 0 else 0.0


def local_global_gap(sv_local: torch.Tensor, sv_global: torch.Tensor, floor_local: float = 0.0,
                     floor_global: float = 0.0, top: int | None = None) -> tuple[float, int]:
    """R = (1/K) sum_{k<=K} log10(lambda_k^(l) / lambda_k^(g))  (journal Eq. 1). Returns (R, K).

    The logarithm is base 10, the scale of the spectrum plots, so R is the mean vertical
    gap between the plotted local and global curves (R * ln 10 gives the natural-log value).
    K defaults to the leading indices where both values are above their numerical floors;
    with ``top`` the first ``top`` indices are used and values at or below a floor are
    raised to it, so zeros never give inf or NaN.
    """
    n = min(len(sv_local), len(sv_global))
    sl, sg = sv_local[:n].to(torch.float64), sv_global[:n].to(torch.float64)
    if top is None:
        ok = (sl > floor_local) & (sg > floor_global)
        k = int(ok.long().cumprod(0).sum())  # leading run where both are resolved
    else:
        k = min(int(top), n)
    if k == 0:
        return 0.0, 0
    tiny = torch.finfo(torch.float64).tiny
    sl = sl[:k].clamp_min(max(floor_local, tiny))
    sg = sg[:k].clamp_min(max(floor_global, tiny))
    return float((sl.log10() - sg.log10()).mean()), k


def log10_safe(sv: torch.Tensor, floor: float) -> torch.Tensor:
    """log10 of singular values for plotting, values below the floor shown at the floor."""
    return sv.clamp_min(max(floor, torch.finfo(torch.float64).tiny)).log10()


def log10_mean_std(svs: list[torch.Tensor], floors: list[float], top: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and (population) standard deviation over runs of log10 singular values k = 1..top
    (each floored as ``log10_safe``): the seeds of one configuration as one curve with a band."""
    k = min(top, *(len(s) for s in svs))
    y = torch.stack([log10_safe(s[:k], f) for s, f in zip(svs, floors)])
    return y.mean(dim=0), y.std(dim=0, correction=0)


__all__ = ["covariance", "log10_mean_std", "spectrum", "numerical_floor", "n_significant", "n_relative", "effective_rank", "variance_share", "tail_share", "tail_mean",
           "local_global_gap", "log10_safe", "DEFAULT_TAU", "DEFAULT_REL"]
