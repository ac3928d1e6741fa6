"""Whether the global model has plateaued: the regime rule's second criterion (docs/scale.md,
amendment of 2026-11-28, committed before any record it decides was computed).

Per seed, the least-squares slope of the global test accuracy (points a round) over the last
W = max(5, ceil(R / 3)) rounds of R. The setting has **plateaued** when the seed-mean slope is
within +-0.25 point a round (a projected change under W / 4 points over the window) and its
one-sided 95 % upper bound (Student t over seeds) is under 0.5 point a round. ``simulate``
gives the rule's pass rate for a curve of a given true slope under independent Gaussian
round-to-round noise: at the noise measured at the BatchNorm rungs a flat curve passes and a
curve rising 0.5 point a round fails (docs/scale.md prints the rates).

The rule it replaces (``old_change``, kept and reported beside it): the seed-mean change from
round R - 3 to R under 1 point; two single rounds of a noisy curve decide it.
"""
from __future__ import annotations

import math

SLOPE_MAX = 0.25  # points a round: |seed-mean slope| below this
UPPER_MAX = 0.5  # points a round: the slope's one-sided 95 % upper bound below this
OLD_MAX = 1.0  # points: the old rule's |change from R - 3 to R|


def window(rounds: int) -> int:
    """The rounds the slope is fitted over: max(5, ceil(R / 3)), at most R."""
    return min(rounds, max(5, -(-rounds // 3)))


def slope(ys: list[float]) -> float:
    """Least-squares slope of ``ys`` against 0, 1, 2, ... (per step)."""
    n = len(ys)
    if n < 2:
        raise ValueError("a slope needs two points")
    xbar, ybar = (n - 1) / 2, sum(ys) / n
    return sum((i - xbar) * (y - ybar) for i, y in enumerate(ys)) / sum((i - xbar) ** 2 for i in range(n))


def _upper(xs: list[float]) -> float:
    """The one-sided 95 % Student-t upper bound of the mean of ``xs`` (inf for one value)."""
    n = len(xs)
    mean = sum(xs) / n
    if n < 2:
        return math.inf
    from scipy.stats import t

    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    return mean + float(t.ppf(0.95, n - 1)) * sd / math.sqrt(n)


def plateau(curves: list[list[float]]) -> dict:
    """The rule on one setting's curves (one per seed: global test accuracy in points at rounds
    1..R, the same R): the window, the per-seed slopes, the seed-mean slope and its upper
    bound, the projected change over the window, and whether it has plateaued; beside it the
    old rule's change from R - 3 to R."""
    r = len(curves[0])
    if any(len(c) != r for c in curves) or r < 2:
        raise ValueError("the curves must have the same rounds, at least 2")
    w = window(r)
    slopes = [slope(c[-w:]) for c in curves]
    mean, up = sum(slopes) / len(slopes), _upper(slopes)
    old = sum(c[-1] - c[-4] for c in curves) / len(curves) if r >= 4 else None  # the old rule needs round R - 3
    return {"window": w, "slopes": slopes, "slope_mean": mean, "slope_upper": up, "projected_change": mean * w,
            "plateaued": abs(mean) < SLOPE_MAX and up < UPPER_MAX,
            "old_change": old, "old_plateaued": None if old is None else abs(old) < OLD_MAX}


def simulate(sigma: float, rounds: int, seeds: int, true_slope: float, trials: int = 20000,
             seed: int = 0) -> dict:
    """Pass rates of the rule (and the old one) for curves c + true_slope * t + N(0, sigma^2)
    independently each round, ``seeds`` curves a setting, ``trials`` settings (numpy's PCG64
    from ``seed``: the same rates on every machine)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    t = np.arange(rounds, dtype=np.float64)
    y = true_slope * t + sigma * rng.standard_normal((trials, seeds, rounds))
    w = window(rounds)
    x = np.arange(w) - (w - 1) / 2
    b = (y[..., -w:] * x).sum(-1) / (x * x).sum()
    m, sd = b.mean(1), b.std(1, ddof=1)
    from scipy.stats import t as student

    up = m + float(student.ppf(0.95, seeds - 1)) * sd / math.sqrt(seeds)
    new = (np.abs(m) < SLOPE_MAX) & (up < UPPER_MAX)
    old = np.abs((y[..., -1] - y[..., -4]).mean(1)) < OLD_MAX
    return {"sigma": sigma, "rounds": rounds, "seeds": seeds, "true_slope": true_slope, "window": w,
            "trials": trials, "passes": float(new.mean()), "old_passes": float(old.mean())}


def noise_from_changes(changes_by_setting: list[list[float]]) -> float:
    """The round-to-round noise sigma implied by the seeds' spread of the old rule's 3-round
    change: a pooled variance over settings, var(y_R - y_{R-3}) = 2 sigma^2 for independent
    noise (an upper bound: seeds' different trends add to the spread)."""
    num = sum(sum((x - sum(v) / len(v)) ** 2 for x in v) for v in changes_by_setting if len(v) > 1)
    dof = sum(len(v) - 1 for v in changes_by_setting if len(v) > 1)
    return math.sqrt(num / dof / 2)


def noise_from_curves(curves: list[list[float]], w: int) -> dict:
    """The round-to-round noise measured on the curves themselves: per curve the residuals
    about its least-squares line over the last ``w`` rounds, pooled (sigma^2 = sum of squared
    residuals / sum of (w - 2) degrees of freedom), and the residuals' mean lag-1
    autocorrelation (near -1/w for independent noise: ``simulate``'s assumption)."""
    if w < 3 or any(len(c) < w for c in curves) or not curves:
        raise ValueError("the noise about a line needs at least 3 rounds of every curve")
    x = [i - (w - 1) / 2 for i in range(w)]
    ss, lag = 0.0, []
    for c in curves:
        ys = c[-w:]
        b, ybar = slope(ys), sum(ys) / w
        r = [y - ybar - b * xi for y, xi in zip(ys, x)]
        rr = sum(v * v for v in r)
        ss += rr
        if rr > 0:
            lag.append(sum(r[i] * r[i + 1] for i in range(w - 1)) / rr)
    return {"sigma": math.sqrt(ss / (len(curves) * (w - 2))), "lag1": sum(lag) / len(lag) if lag else 0.0,
            "curves": len(curves), "window": w}
