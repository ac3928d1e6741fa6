"""The covariance of a representation streamed in batches, in float64.

Sigma = (1/N) sum_i (z_i - z_bar)(z_i - z_bar)^T (FedDecorr Sec. 3.1) without holding the N x d
matrix: each batch is centred on its own mean in float64 and merged with the running mean
and scatter by Chan, Golub and LeVeque's pairwise update (1979), M2 = M2_a + M2_b +
delta delta^T n_a n_b / n, delta = mean_b - mean_a. Centring before the products keeps the
collapsed tail's round-off at the level of the two-pass formula (a raw sum of z z^T minus
N z_bar z_bar^T loses it to cancellation when the mean is large).
"""
from __future__ import annotations

import torch

from ..linalg import eigen_spectrum


class StreamingCovariance:
    """Running mean and scatter of rows of width ``dim``; ``add(batch)`` takes an n x dim
    tensor of any float dtype (promoted to float64 before anything is computed)."""

    def __init__(self, dim: int):
        self.n = 0
        self.mean = torch.zeros(dim, dtype=torch.float64)
        self.m2 = torch.zeros(dim, dim, dtype=torch.float64)

    def add(self, batch: torch.Tensor) -> None:
        b = batch.detach().to("cpu", torch.float64)
        nb = b.shape[0]
        if nb == 0:
            return
        mean_b = b.mean(0)
        c = b - mean_b
        m2_b = c.T @ c
        n = self.n + nb
        delta = mean_b - self.mean
        self.m2 += m2_b + torch.outer(delta, delta) * (self.n * nb / n)
        self.mean += delta * (nb / n)
        self.n = n

    def covariance(self) -> torch.Tensor:
        """Sigma with the 1/N normalisation of the paper (the spectra's)."""
        if self.n == 0:
            raise ValueError("no rows were added")
        cov = self.m2 / self.n
        return (cov + cov.T) / 2  # exactly symmetric for the symmetric eigensolver

    def spectrum(self) -> tuple[torch.Tensor, float]:
        """Singular values of Sigma (descending, float64) and their numerical floor, as
        ``spectra.functional.spectrum`` gives them for the whole matrix."""
        return eigen_spectrum(self.covariance(), self.n)
