"""Pure math shared by training (the FedDecorr loss) and analysis (Proposition 1 on real
representations): lower than both, it imports neither."""
from __future__ import annotations

import math

import torch

from .errors import CollapseLabError

CONST_EPS = 1e-10  # relative variance below which a dimension counts as constant


def correlation_matrix(z: torch.Tensor, eps: float = CONST_EPS) -> torch.Tensor:
    """Batch correlation matrix K (d x d) of z (N x d), population normalisation, unit diagonal."""
    n = z.shape[0]
    mean = z.mean(dim=0)
    zc = z - mean
    var = zc.pow(2).mean(dim=0)
    const = var <= eps * (1.0 + mean.pow(2))
    # where() on the variance, not the std: sqrt'(0) = inf would turn the masked branch's
    # zero gradient into NaN.
    std = torch.where(const, torch.ones_like(var), var).sqrt()
    zh = (zc / std).masked_fill(const, 0.0)
    k = zh.T @ zh / n
    return k + torch.diag(const.to(k.dtype))


def masked_correlation_matrix(z: torch.Tensor, w: torch.Tensor, eps: float = CONST_EPS) -> torch.Tensor:
    """``correlation_matrix`` of the rows of z (N x d) where w (N, 0/1) is 1: the same K as
    on those rows alone, without selecting them (a data-dependent shape), so a batch
    padded to a fixed size (``training.stacked``) and vmap both work."""
    n = w.sum()
    wc = w.unsqueeze(1)
    mean = (z * wc).sum(dim=0) / n
    zc = (z - mean) * wc  # padded rows are zero from here on
    var = zc.pow(2).sum(dim=0) / n
    const = var <= eps * (1.0 + mean.pow(2))
    std = torch.where(const, torch.ones_like(var), var).sqrt()
    zh = (zc / std).masked_fill(const, 0.0)
    k = zh.T @ zh / n
    return k + torch.diag(const.to(k.dtype))


def covariance(z: torch.Tensor) -> torch.Tensor:
    """Sigma = (1/N) Zc^T Zc with Zc = Z - mean, computed in float64 on the CPU (FedDecorr
    Sec. 3.1). Moving to the CPU in float64 first means no float32 accumulation and no
    TF32, whatever the device the representations came from."""
    z = z.detach().to("cpu", torch.float64)
    zc = z - z.mean(dim=0, keepdim=True)
    return zc.T @ zc / z.shape[0]


def numerical_floor(top: float, d: int, n: int) -> float:
    """Eigenvalues below this are round-off: float64 eps times the matrix size times the top value."""
    return torch.finfo(torch.float64).eps * max(d, n) * max(top, 0.0)


def covariance_spectrum(z: torch.Tensor) -> tuple[torch.Tensor, float]:
    """Descending singular values of the covariance of z (N x d) and the numerical floor.
    Sigma is symmetric positive semi-definite, so its singular values are its eigenvalues:
    the symmetric eigensolver, round-off negatives clamped to 0."""
    return eigen_spectrum(covariance(z), z.shape[0])


def eigen_spectrum(cov: torch.Tensor, n: int) -> tuple[torch.Tensor, float]:
    """``covariance_spectrum`` of an already computed covariance of n samples."""
    ev = torch.linalg.eigvalsh(cov).flip(0).clamp_min(0.0)
    floor = numerical_floor(float(ev[0]) if len(ev) else 0.0, cov.shape[0], n)
    return ev, floor


def simplex_etf(d: int, c: int, generator: torch.Generator) -> torch.Tensor:
    """FedETF Eq. 3: a random simplex ETF, d x C, unit-norm columns with pairwise cosine
    -1/(C-1) (the fixed classifier of ``methods.addons``; drawn again by the
    analysis, ``analysis.renderers.etf``)."""
    if d < c:
        raise CollapseLabError(f"an ETF classifier needs a representation at least as wide as the class count "
                               f"(d = {d} < C = {c}); use a wider model")
    p, _ = torch.linalg.qr(torch.randn(d, c, generator=generator, dtype=torch.float64))
    centre = torch.eye(c, dtype=torch.float64) - torch.full((c, c), 1.0 / c, dtype=torch.float64)
    return math.sqrt(c / (c - 1)) * p @ centre
