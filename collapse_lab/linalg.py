"""Pure math shared by training (the FedDecorr loss) and analysis (Proposition 1 on real
representations): lower than both, it imports neither."""
from __future__ import annotations

import torch

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
    padded to a fixed size (``fl.stacked``) and vmap both work."""
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
