"""FedDecorr (Shi et al., ICLR 2023), Eq. 8: L = (1/d^2) ||K||_F^2, K the batch correlation matrix of z.

Two normalisations of the same quantity, the option ``normalization`` (``--reg-option
normalization=official``; the paper and cpu presets choose ``official``, which produced the
papers' numbers, the quick preset keeps ``paper``):

``paper`` (default), Eq. 8 exactly. z is z-scored per dimension with the population
(1/N) standard deviation, K = (1/N) z_hat^T z_hat is then a true correlation matrix
(unit diagonal), and L = mean(K**2) = (1/d^2) ||K||_F^2, in [1/d, 1].

``official``, the released code (github.com/bytedance/FedDecorr): z is scaled by
sqrt(eps + unbiased variance), C = z_hat^T z_hat (no 1/N), the diagonal is dropped and
L_off = mean over the d(d-1) off-diagonal entries of C**2, divided by N; 0 for N = 1.
Since C = (N - 1) K (up to eps),

    L_off = (N - 1)^2 / (N d (d - 1)) * (d^2 L_paper - d).

Degenerate batches (paper normalisation): a dimension whose batch variance is at most
``eps * (1 + mean^2)`` (a dead ReLU unit, or any dimension when N = 1) is treated as
uncorrelated with all others: its row and column of K are those of the identity. K
stays a valid correlation matrix, Proposition 1 still holds, and neither the value
nor the gradient is ever NaN. A batch of one sample gives K = I and L = 1/d.
"""
from __future__ import annotations

import torch

from ..linalg import CONST_EPS, correlation_matrix, masked_correlation_matrix
from . import REGULARIZERS

OFFICIAL_EPS = 1e-8  # the released code's epsilon


def feddecorr_loss(z: torch.Tensor, eps: float = CONST_EPS) -> torch.Tensor:
    """Eq. 8: (1/d^2) ||K||_F^2."""
    k = correlation_matrix(z.float() if z.dtype in (torch.float16, torch.bfloat16) else z, eps)
    return k.pow(2).mean()


def feddecorr_loss_official(z: torch.Tensor, eps: float = OFFICIAL_EPS) -> torch.Tensor:
    """The released code's scaling (see module docstring for the factor to Eq. 8)."""
    n, d = z.shape
    if n == 1 or d == 1:
        return z.sum() * 0.0
    z = z.float() if z.dtype in (torch.float16, torch.bfloat16) else z
    zc = z - z.mean(dim=0, keepdim=True)
    zh = zc / torch.sqrt(eps + zc.var(dim=0, keepdim=True))
    c = zh.T @ zh
    off = c - torch.diag(torch.diagonal(c))
    return off.pow(2).sum() / (d * (d - 1)) / n


def feddecorr_loss_masked(z: torch.Tensor, w: torch.Tensor, eps: float = CONST_EPS) -> torch.Tensor:
    """Eq. 8 on the rows of z where w (0/1) is 1 (a padded batch, ``training.stacked``)."""
    return masked_correlation_matrix(z, w, eps).pow(2).mean()


def feddecorr_loss_official_masked(z: torch.Tensor, w: torch.Tensor, eps: float = OFFICIAL_EPS) -> torch.Tensor:
    """The released code's scaling on the rows where w is 1; 0 for one row (as unmasked)."""
    d = z.shape[1]
    n = w.sum()
    wc = w.unsqueeze(1)
    zc = (z - (z * wc).sum(dim=0, keepdim=True) / n) * wc
    zh = zc / torch.sqrt(eps + zc.pow(2).sum(dim=0, keepdim=True) / (n - 1).clamp(min=1))
    c = zh.T @ zh
    off = c - torch.diag(torch.diagonal(c))
    return off.pow(2).sum() / max(d * (d - 1), 1) / n


def official_from_paper(loss_paper: float, n: int, d: int) -> float:
    """Convert an Eq. 8 value to the official scaling (exact when eps -> 0)."""
    return (n - 1) ** 2 / (n * d * (d - 1)) * (d * d * loss_paper - d)


def _masked(normalization: str = "paper"):
    """The same loss on a padded batch: ``callable(z, logits, w)``, w the 0/1 row mask."""
    if normalization == "official":
        return lambda z, logits, w: feddecorr_loss_official_masked(z, w)
    return lambda z, logits, w: feddecorr_loss_masked(z, w)


NORMALIZATIONS = ("paper", "official")


# The paper preset reproduces the printed numbers, and they came from the released code,
# whose scaling weighs the term about 62x Eq. 8's at batch 64, d = 1280 (docs/conventions.md).
@REGULARIZERS.register("feddecorr", defaults={"normalization": "paper"}, choices={"normalization": NORMALIZATIONS},
                       presets={"paper": {"normalization": "official"}, "cpu": {"normalization": "official"}}, beta=0.1, masked=_masked)
def feddecorr(normalization: str = "paper"):
    if normalization == "official":
        return lambda z, logits=None: feddecorr_loss_official(z)
    return lambda z, logits=None: feddecorr_loss(z)
