"""Linear CKA with the unbiased HSIC estimator (Kornblith et al. 2019; the unbiased HSIC of
Song et al. 2012, as Nguyen et al. 2021 use it for CKA), in float64.

For representations X (n x p) and Y (n x q) of the same n inputs, with K = X X^T and
L = Y Y^T and their diagonals set to zero (K~, L~):

    HSIC_1(K, L) = [ tr(K~ L~) + (1^T K~ 1)(1^T L~ 1) / ((n-1)(n-2)) - 2/(n-2) 1^T K~ L~ 1 ] / (n (n-3))
    CKA(X, Y)    = HSIC_1(K, L) / sqrt(HSIC_1(K, K) HSIC_1(L, L))

Computed in feature space, O(n (p + q)^2), never forming the n x n Gram matrices:
tr(K~ L~) = ||X^T Y||_F^2 - sum_i ||x_i||^2 ||y_i||^2, K~ 1 = X (X^T 1) - (||x_i||^2)_i.
Invariant to orthogonal transformations and isotropic scaling of either argument; needs
n >= 4. The estimator can be slightly negative for unrelated representations.
"""
from __future__ import annotations

import torch


def _parts(x: torch.Tensor):
    # centred first, as Kornblith et al.'s code does: the unbiased HSIC does not change
    # (exactly), and a large mean no longer cancels catastrophically (1e4: nan before)
    x = x.detach().to("cpu", torch.float64)
    x = x - x.mean(0, keepdim=True)
    sq = (x * x).sum(1)  # ||x_i||^2, the diagonal of K
    k1 = x @ x.sum(0) - sq  # K~ 1
    return x, sq, k1


def hsic_unbiased(x: torch.Tensor, y: torch.Tensor) -> float:
    """HSIC_1 of the linear kernels of x and y (rows: the same inputs)."""
    n = x.shape[0]
    if n < 4 or y.shape[0] != n:
        raise ValueError(f"unbiased HSIC needs the same n >= 4 rows in both (got {x.shape[0]} and {y.shape[0]})")
    x, sx, kx = _parts(x)
    y, sy, ky = _parts(y)
    tr = float((x.T @ y).pow(2).sum() - (sx * sy).sum())
    sum_k, sum_l = float(kx.sum()), float(ky.sum())
    return (tr + sum_k * sum_l / ((n - 1) * (n - 2)) - 2.0 / (n - 2) * float(kx @ ky)) / (n * (n - 3))


def linear_cka(x: torch.Tensor, y: torch.Tensor) -> float:
    """Debiased linear CKA in [about 0, 1]; 1 for representations equal up to rotation and scale."""
    xy, xx, yy = hsic_unbiased(x, y), hsic_unbiased(x, x), hsic_unbiased(y, y)
    if xx <= 0 or yy <= 0:
        return float("nan")
    return xy / (xx * yy) ** 0.5


def cka_matrix(reps: list[torch.Tensor]) -> torch.Tensor:
    """Pairwise CKA of several models' representations of the same inputs (clients x clients)."""
    m = len(reps)
    self_h = [hsic_unbiased(r, r) for r in reps]
    out = torch.eye(m, dtype=torch.float64)
    for i in range(m):
        if self_h[i] <= 0:
            out[i, i] = float("nan")
        for j in range(i + 1, m):
            if self_h[i] <= 0 or self_h[j] <= 0:  # a constant (e.g. all-zero) representation: undefined
                out[i, j] = out[j, i] = float("nan")
                continue
            v = hsic_unbiased(reps[i], reps[j]) / (self_h[i] * self_h[j]) ** 0.5
            out[i, j] = out[j, i] = v
    return out


__all__ = ["cka_matrix", "hsic_unbiased", "linear_cka"]
