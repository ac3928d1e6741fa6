"""Tests of the confirmatory protocol (docs/scale/protocol-confirmatory.md), as pure functions
of per-seed values: Jonckheere-Terpstra by permutation, Welch and paired t, two one-sided
tests, intersection-union and Holm's step-down with adjusted p-values.

Each test returns ``p_plus`` (the claimed direction's one-sided p-value), ``p_minus`` (the
reverse direction's), the effect and its 95 % interval.
"""
from __future__ import annotations

import math

import numpy as np

RNG_SEED = 20261202  # the protocol's generator seed (permutations and bootstrap)
PERMUTATIONS = 100_000
BOOTSTRAP = 10_000


def _t_sf(x: float, df: float) -> float:
    from scipy.stats import t

    return float(t.sf(x, df))


def _t_ppf(q: float, df: float) -> float:
    from scipy.stats import t

    return float(t.ppf(q, df))


def jt_statistic(groups: np.ndarray) -> np.ndarray:
    """J over the last two axes (..., g, n): for every ordered pair of groups i < j the count of
    (x in i, y in j) with y > x, ties counted 0.5: large when values rise along the groups."""
    g = groups.shape[-2]
    total = np.zeros(groups.shape[:-2])
    for i in range(g):
        for j in range(i + 1, g):
            x, y = groups[..., i, :, None], groups[..., j, None, :]
            total = total + (y > x).sum(axis=(-2, -1)) + 0.5 * (y == x).sum(axis=(-2, -1))
    return total


def jonckheere(groups: list[list[float]], permutations: int = PERMUTATIONS, seed: int = RNG_SEED,
               bootstrap: int = BOOTSTRAP) -> dict:
    """Jonckheere-Terpstra for values rising along ``groups`` (equal sizes). p-values from the
    permutation distribution (relabellings of all values among the groups, sizes kept):
    p+ = (1 + #{J* >= J}) / (B + 1), p- = (1 + #{J* <= J}) / (B + 1). Effect: the concordance
    J / pairs, with a 95 % percentile bootstrap interval (seeds resampled within groups)."""
    x = np.asarray(groups, dtype=np.float64)
    g, n = x.shape
    pairs = n * n * g * (g - 1) / 2
    j = float(jt_statistic(x))
    rng = np.random.Generator(np.random.PCG64(seed))
    flat = x.reshape(-1)
    ge = le = 0
    for start in range(0, permutations, 10_000):
        b = min(10_000, permutations - start)
        perm = rng.permuted(np.broadcast_to(flat, (b, flat.size)), axis=1).reshape(b, g, n)
        js = jt_statistic(perm)
        ge += int((js >= j - 1e-9).sum())
        le += int((js <= j + 1e-9).sum())
    idx = rng.integers(0, n, size=(bootstrap, g, n))
    boot = jt_statistic(np.take_along_axis(np.broadcast_to(x, (bootstrap, g, n)), idx, axis=2)) / pairs
    low, high = np.quantile(boot, [0.025, 0.975])
    return {"p_plus": (1 + ge) / (permutations + 1), "p_minus": (1 + le) / (permutations + 1),
            "effect": j / pairs, "low": float(low), "high": float(high), "statistic": j}


def _one_sided(mean: float, se: float, df: float, delta: float = 0.0) -> tuple[float, float]:
    """(p for mean > delta, p for mean < delta) of a t statistic; no spread: 0 or 1."""
    if se == 0:
        return (0.0 if mean > delta else 1.0), (0.0 if mean < delta else 1.0)
    t = (mean - delta) / se
    return _t_sf(t, df), _t_sf(-t, df)


def welch(a: list[float], b: list[float]) -> dict:
    """Welch's t for mean(a) > mean(b), unpaired: Welch-Satterthwaite df, the two-sided 95 %
    interval of the difference."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    mean, se = float(a.mean() - b.mean()), math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1)) if se > 0 else len(a) + len(b) - 2
    p_plus, p_minus = _one_sided(mean, se, df)
    half = _t_ppf(0.975, df) * se
    return {"p_plus": p_plus, "p_minus": p_minus, "effect": mean, "low": mean - half, "high": mean + half}


def paired(diffs: list[float]) -> dict:
    """The paired t for mean(diffs) > 0 (n - 1 df), with its two-sided 95 % interval."""
    d = np.asarray(diffs, dtype=np.float64)
    mean, se, df = float(d.mean()), float(d.std(ddof=1) / math.sqrt(len(d))), len(d) - 1
    p_plus, p_minus = _one_sided(mean, se, df)
    half = _t_ppf(0.975, df) * se
    return {"p_plus": p_plus, "p_minus": p_minus, "effect": mean, "low": mean - half, "high": mean + half}


def tost(x: list[float], margin: float) -> dict:
    """|mean(x)| < margin by two one-sided t tests: p+ the larger of the p for mean > -margin
    and for mean < margin; p- the p for |mean| > margin on the side of the estimate."""
    v = np.asarray(x, dtype=np.float64)
    mean, se, df = float(v.mean()), float(v.std(ddof=1) / math.sqrt(len(v))), len(v) - 1
    above_low, _ = _one_sided(mean, se, df, -margin)
    _, below_high = _one_sided(mean, se, df, margin)
    beyond = _one_sided(mean, se, df, margin)[0] if mean >= 0 else _one_sided(mean, se, df, -margin)[1]
    half = _t_ppf(0.975, df) * se
    return {"p_plus": max(above_low, below_high), "p_minus": beyond, "effect": mean,
            "low": mean - half, "high": mean + half}


def intersection_union(parts: list[dict]) -> dict:
    """Every part in the claimed direction: p+ the largest part's p+, p- the smallest part's
    p-; effect and interval of the part with the largest p+ (the weakest link)."""
    weakest = max(parts, key=lambda p: p["p_plus"])
    return {**{k: weakest[k] for k in ("effect", "low", "high")},
            "p_plus": weakest["p_plus"], "p_minus": min(p["p_minus"] for p in parts)}


def holm_adjusted(ps: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values: p_adj(i) = max over j <= i of min(1, (m - j + 1) p_(j)),
    in the input's order; p_adj <= level exactly when Holm at ``level`` rejects."""
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        out[i] = running
    return out
