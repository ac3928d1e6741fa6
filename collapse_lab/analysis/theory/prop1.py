"""Proposition 1 (FedDecorr, App. B, Eq. 48): for a d x d correlation matrix K with
singular values lambda_i,  sum_i (lambda_i - mean(lambda))^2 = ||K||_F^2 - d."""
from __future__ import annotations

import numpy as np
import torch
from scipy.stats import random_correlation


def prop1_sides(k: torch.Tensor) -> tuple[float, float]:
    """(||K||_F^2 - d, sum (lambda - mean lambda)^2), the two routes, in float64."""
    k = k.to(torch.float64)
    d = k.shape[0]
    lam = torch.linalg.svdvals(k)  # singular values (an SVD, not the Frobenius sum)
    lhs = float((k * k).sum()) - d
    rhs = float(((lam - lam.mean()) ** 2).sum())
    return lhs, rhs


def relative_error(lhs: float, rhs: float) -> float:
    return abs(lhs - rhs) / max(abs(lhs), abs(rhs), 1e-300)


def random_correlation_matrix(d: int, rng: np.random.Generator) -> torch.Tensor:
    """Davies & Higham (2000) random correlation matrix with a random spectrum summing to d."""
    eig = rng.gamma(0.5, size=d)
    eig = eig * d / eig.sum()
    return torch.from_numpy(random_correlation.rvs(eig, random_state=rng, tol=1e-12))


SIZES = (2, 3, 5, 10, 32, 64, 128, 256, 512, 1024)


def check_random(sizes=SIZES, per_size: int = 3, seed: int = 0, done=None) -> list[dict]:
    """Both sides of Proposition 1 on ``per_size`` random correlation matrices of each size;
    ``done(d)`` is told as each size is finished (the command's progress)."""
    rng = np.random.default_rng(seed)
    out = []
    for d in sizes:
        for _ in range(per_size):
            k = random_correlation_matrix(d, rng)
            lhs, rhs = prop1_sides(k)
            out.append({"d": d, "lhs": lhs, "rhs": rhs, "rel_error": relative_error(lhs, rhs),
                        "max_diag_error": float((torch.diagonal(k) - 1).abs().max())})
        if done is not None:
            done(d)
    return out


TARGET = 1e-10  # relative: both routes are exact in float64 up to round-off


def check_real(store, fs, warn=None) -> list[dict]:
    """Both sides on real correlation matrices: the representations of the newest trained run
    of ``store`` (its last round's global model and client 0's where kept), by ``fs``
    (``analysis.features.FeatureSource``); [] where the store has no trained run."""
    from pathlib import Path

    from ...linalg import correlation_matrix
    from ...store import find_runs

    runs = [r for r in find_runs(Path(store), warn)
            if r.meta.get("rounds_complete", 0) >= 1 and r.meta.get("status") != "diverged"]
    if not runs:
        return []
    run = max(runs, key=lambda r: r.meta.get("created", ""))
    rd, real = int(run.meta["rounds_complete"]), []
    for which, k in (("global", None), ("client_0", 0)):
        if k is not None and not run.has_client(rd, k):
            continue
        kmat = correlation_matrix(fs.features(run, rd, k))
        lhs, rhs = prop1_sides(kmat)
        real.append({"run": run.path.name, "round": rd, "model": which, "d": kmat.shape[0], "lhs": lhs, "rhs": rhs,
                     "rel_error": relative_error(lhs, rhs)})
    return real
