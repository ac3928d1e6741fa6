"""The plateau's slope rule (judging/plateau.py, docs/scale.md amendment of 2026-11-28):
the slope against numpy's least squares, the rule on hand curves, and its simulated power
against the closed form for a rule on the mean alone."""
from __future__ import annotations

import math

import numpy as np
import pytest

from collapse_lab.judging.plateau import SLOPE_MAX, noise_from_curves, plateau, simulate, slope, window


def test_the_window_is_a_third_of_the_rounds_and_at_least_five():
    assert [window(r) for r in (3, 5, 10, 15, 16, 30, 100)] == [3, 5, 5, 5, 6, 10, 34]


def test_the_slope_is_least_squares():
    ys = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0]
    assert slope(ys) == pytest.approx(np.polyfit(np.arange(6), ys, 1)[0], rel=1e-12)


def test_a_flat_curve_plateaus_and_a_rising_one_does_not():
    flat = [[50.0 + (0.3 if (i + s) % 2 else -0.3) for i in range(30)] for s in range(6)]
    out = plateau(flat)
    assert out["window"] == 10 and out["plateaued"] and abs(out["slope_mean"]) < 0.1
    rising = [[20.0 + 0.5 * i + c[i] - 50.0 for i in range(30)] for c in flat]
    out = plateau(rising)
    assert not out["plateaued"] and out["slope_mean"] == pytest.approx(0.5, abs=0.1)
    assert out["projected_change"] == pytest.approx(out["slope_mean"] * 10)
    assert out["old_change"] == pytest.approx(sum(c[-1] - c[-4] for c in rising) / 6)


def test_the_simulated_rate_matches_the_closed_form_where_the_mean_decides():
    # sigma tiny: the upper bound never binds, and a flat curve always passes, a 0.5 rise never
    assert simulate(0.01, 30, 6, 0.0, trials=2000)["passes"] == 1.0
    assert simulate(0.01, 30, 6, 0.5, trials=2000)["passes"] == 0.0
    # with noise, the mean slope over W = 10 rounds and 6 seeds is normal with sd sigma / sqrt(82.5 x 6):
    # P(|mean| < 0.25) is the rule's ceiling (the upper-bound condition can only lower it)
    sigma = 2.0
    sd = sigma / math.sqrt(82.5 * 6)
    from scipy.stats import norm

    ceiling = norm.cdf(SLOPE_MAX / sd) - norm.cdf(-SLOPE_MAX / sd)
    got = simulate(sigma, 30, 6, 0.0, trials=20000)
    assert got["passes"] <= ceiling + 0.01 and got["passes"] > 0.9
    assert simulate(sigma, 30, 6, 0.0, trials=20000) == got  # one seeded stream: the same rates


def test_the_noise_about_each_line_is_the_residuals_pooled():
    # residual patterns orthogonal to 1 and t over 5 rounds (so a line leaves them whole), on two
    # different lines, plus rounds before the window that must not count
    e1, e2 = [1.0, -2.0, 0.0, 2.0, -1.0], [1.0, -1.0, 0.0, -1.0, 1.0]
    assert sum(e1) == sum(e2) == 0 and sum(i * v for i, v in enumerate(e1)) == sum(i * v for i, v in enumerate(e2)) == 0
    c1 = [99.0, -7.0] + [3.0 + 0.5 * i + v for i, v in enumerate(e1)]
    c2 = [40.0 - 2.0 * i + v for i, v in enumerate(e2)]
    got = noise_from_curves([c1, c2], 5)
    assert got["sigma"] == pytest.approx(math.sqrt((10 + 4) / (2 * 3)), rel=1e-12)
    lag1 = lambda e: sum(e[i] * e[i + 1] for i in range(4)) / sum(v * v for v in e)  # noqa: E731
    assert got["lag1"] == pytest.approx((lag1(e1) + lag1(e2)) / 2, rel=1e-12)  # (-0.6 + -0.75) / 2
    # on simulated independent noise the measure finds the sigma it was drawn with
    rng = np.random.default_rng(1)
    curves = (0.3 * np.arange(30) + 1.7 * rng.standard_normal((400, 30))).tolist()
    assert noise_from_curves(curves, 10)["sigma"] == pytest.approx(1.7, rel=0.03)
    with pytest.raises(ValueError):
        noise_from_curves([[1.0, 2.0]], 2)
