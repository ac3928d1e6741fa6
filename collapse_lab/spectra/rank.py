"""Rank measures of a representation beside the count above tau and the effective rank
(``functional``), and dead units. All in float64 on the CPU, as the spectra.

- Dead (constant) units: units of z whose variance over the evaluation set is at or below
  the numerical floor (``functional.numerical_floor`` of the largest unit variance). A dead
  ReLU unit is exactly 0; a constant unit's sample variance is round-off. FedDecorr's loss
  leaves such a unit unpenalised (its row of the correlation matrix is the identity's).
- RankMe (Garrido et al. 2023, Eq. 1): exp(-sum_k p_k log p_k), p_k = sigma_k / ||sigma||_1
  + eps, sigma the singular values of the embedding matrix Z (N x d) itself, uncentred, as
  the paper defines it; eps = 1e-7 (the paper's). Implementations that use the covariance's
  eigenvalues (squared singular values of the centred Z) compute our ``effective_rank``.
- alpha-ReQ (Agrawal et al. 2022): the decay exponent alpha of the eigenspectrum of the
  covariance, lambda_k ~ k^-alpha, from a least-squares line through (log k, log lambda_k)
  over the values above the numerical floor (optionally the first ``top``).
- Stable rank: ||Zc||_F^2 / ||Zc||_2^2 = sum_k lambda_k / lambda_1 of the covariance
  (Rudelson & Vershynin 2007).
"""
from __future__ import annotations

import torch

from .functional import numerical_floor

RANKME_EPS = 1e-7


def unit_variances(z: torch.Tensor) -> torch.Tensor:
    """The (1/N) variance of every unit of z, float64: the covariance's diagonal, in O(N d)
    rather than the d x d matrix."""
    z = z.detach().to("cpu", torch.float64)
    return (z - z.mean(dim=0, keepdim=True)).pow(2).mean(dim=0)


def dead_mask(z: torch.Tensor) -> torch.Tensor:
    """Which units of z (samples x units) are dead: variance at or below the numerical floor
    (a ReLU that is zero on every image, or any constant unit); the one definition of dead
    units (docs/conventions.md)."""
    if z.ndim != 2 or z.shape[0] == 0:
        raise ValueError("dead units need a non-empty (samples, units) matrix")
    var = unit_variances(z)
    floor = numerical_floor(float(var.max()) if len(var) else 0.0, z.shape[1], z.shape[0])
    return var <= floor


def dead_units(z: torch.Tensor) -> torch.Tensor:
    """Indices of the dead units (``dead_mask``)."""
    return torch.nonzero(dead_mask(z)).flatten()


def live_units(z: torch.Tensor) -> torch.Tensor:
    """z without its dead units (the spectra over live units only)."""
    return z[:, ~dead_mask(z)]


def rankme(z: torch.Tensor, eps: float = RANKME_EPS) -> float:
    """RankMe of the embedding matrix z (N x d): exp of the entropy of its normalised
    singular values (Garrido et al. 2023, Eq. 1)."""
    s = torch.linalg.svdvals(z.detach().to("cpu", torch.float64))
    if float(s.sum()) == 0.0:
        return 0.0
    p = s / s.sum() + eps
    return float(torch.exp(-(p * p.log()).sum()))


ALPHA_RANKS = (11, 100)  # the authors' default fit range (ranks, 1-based, inclusive)


def alpha_req(sv: torch.Tensor, floor: float = 0.0, ranks: tuple[int, int] = ALPHA_RANKS) -> float:
    """alpha-ReQ as its authors estimate it (Agrawal et al., NeurIPS 2022; the fit of
    Stringer et al. 2019 their code uses): lambda_k ~ c k^-alpha fitted by weighted least
    squares of log lambda_k on log k with weights 1/k, over the ranks ``ranks`` (11..100 by
    default) among the leading values above ``floor``; alpha is minus the slope. NaN with
    fewer than 2 values in the range. ``alpha_plain`` is the unweighted fit over ranks 1..top
    that collapse-lab reported as alpha_req before (on an exact power law both agree)."""
    s = sv.to(torch.float64)
    s = s[(s > floor).long().cumprod(0).bool()]
    lo, hi = ranks
    k = torch.arange(1, len(s) + 1, dtype=torch.float64)[lo - 1 : hi]
    if len(k) < 2:
        return float("nan")
    x, y, w = k.log(), s[lo - 1 : hi].log(), 1.0 / k
    xm, ym = (w * x).sum() / w.sum(), (w * y).sum() / w.sum()
    return float(-(w * (x - xm) * (y - ym)).sum() / (w * (x - xm) ** 2).sum())


def alpha_plain(sv: torch.Tensor, floor: float = 0.0, top: int | None = None) -> float:
    """The unweighted power-law slope: minus the slope of the least-squares line through
    (log k, log lambda_k), k = 1.., over the leading values above ``floor``, at most the
    first ``top`` (not the authors' alpha-ReQ: see ``alpha_req``). NaN with fewer than 2 values."""
    s = sv.to(torch.float64)
    ok = (s > floor).long().cumprod(0).bool()
    s = s[ok]
    if top is not None:
        s = s[:top]
    if len(s) < 2:
        return float("nan")
    x = torch.arange(1, len(s) + 1, dtype=torch.float64).log()
    y = s.log()
    xc = x - x.mean()
    return float(-(xc * (y - y.mean())).sum() / (xc * xc).sum())


def stable_rank(sv: torch.Tensor) -> float:
    """sum_k lambda_k / lambda_1 of the covariance's eigenvalues (descending)."""
    s = sv.to(torch.float64)
    return float(s.sum() / s[0]) if len(s) and float(s[0]) > 0 else 0.0


__all__ = ["ALPHA_RANKS", "alpha_plain", "alpha_req", "dead_units", "live_units", "rankme", "stable_rank", "unit_variances", "RANKME_EPS"]
