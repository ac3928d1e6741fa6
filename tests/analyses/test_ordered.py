"""The confirmatory protocol's tests (judging/ordered.py) against independent computations:
an exact enumeration of the Jonckheere-Terpstra null, scipy's t tests, Holm by hand."""
from __future__ import annotations

import itertools
from pathlib import Path
import math

import numpy as np
import pytest
from scipy import stats

from collapse_lab.judging import ordered


def _jt_by_hand(groups):
    j = 0.0
    for i, gi in enumerate(groups):
        for gj in groups[i + 1:]:
            j += sum((y > x) + 0.5 * (y == x) for x in gi for y in gj)
    return j


def test_the_statistic_counts_rising_pairs_with_half_ties():
    groups = [[1.0, 3.0], [2.0, 3.0], [5.0, 0.0]]
    assert ordered.jt_statistic(np.array(groups)) == _jt_by_hand(groups) == 6.5  # (1,3)x(2,3): 2.5; (1,3)x(5,0): 2; (2,3)x(5,0): 2


def test_the_permutation_p_matches_the_exact_null_distribution():
    groups = [[1.0, 2.5], [2.0, 4.0], [3.5, 6.0]]  # 6!/(2!)^3 = 90 distinct labellings, enumerated
    flat, j = sum(groups, []), _jt_by_hand(groups)
    null = [_jt_by_hand([list(p[0:2]), list(p[2:4]), list(p[4:6])]) for p in itertools.permutations(flat)]
    exact_plus = sum(x >= j for x in null) / len(null)
    exact_minus = sum(x <= j for x in null) / len(null)
    out = ordered.jonckheere(groups, permutations=40_000, bootstrap=200)
    assert abs(out["p_plus"] - exact_plus) < 0.01 and abs(out["p_minus"] - exact_minus) < 0.01
    assert out["effect"] == j / 12 and out["low"] <= out["effect"] <= out["high"]


def test_ties_enter_the_null_as_they_occur():
    groups = [[1.0, 1.0, 2.0], [1.0, 2.0, 2.0]]
    flat, j = sum(groups, []), _jt_by_hand(groups)
    null = [_jt_by_hand([list(p[:3]), list(p[3:])]) for p in itertools.permutations(flat)]
    out = ordered.jonckheere(groups, permutations=40_000, bootstrap=100)
    assert abs(out["p_plus"] - sum(x >= j for x in null) / len(null)) < 0.01


def test_a_perfect_order_of_four_groups_of_six_is_the_smallest_p():
    groups = [[10.0 * g + s for s in range(6)] for g in range(4)]
    out = ordered.jonckheere(groups)
    assert out["effect"] == 1.0 and out["p_plus"] == 1 / (ordered.PERMUTATIONS + 1) and out["p_minus"] == 1.0


def test_welch_and_paired_are_scipys():
    a, b = [10.0, 14.0, 9.0, 12.0, 11.0], [8.0, 8.5, 7.0, 9.5, 12.0]
    w = ordered.welch(a, b)
    assert math.isclose(w["p_plus"], stats.ttest_ind(a, b, equal_var=False, alternative="greater").pvalue)
    assert math.isclose(w["p_minus"], stats.ttest_ind(a, b, equal_var=False, alternative="less").pvalue)
    ci = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert math.isclose(w["low"], ci.low) and math.isclose(w["high"], ci.high)
    d = [x - y for x, y in zip(a, b)]
    p = ordered.paired(d)
    assert math.isclose(p["p_plus"], stats.ttest_1samp(d, 0.0, alternative="greater").pvalue)
    ci = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
    assert math.isclose(p["low"], ci.low) and math.isclose(p["high"], ci.high)


def test_tost_is_the_larger_of_two_one_sided_tests():
    x = [0.03, 0.07, 0.05, 0.09, 0.04, 0.06]
    out = ordered.tost(x, 0.1)
    above = stats.ttest_1samp(x, -0.1, alternative="greater").pvalue
    below = stats.ttest_1samp(x, 0.1, alternative="less").pvalue
    assert math.isclose(out["p_plus"], max(above, below))
    assert math.isclose(out["p_minus"], stats.ttest_1samp(x, 0.1, alternative="greater").pvalue)


def test_intersection_union_takes_the_weakest_part():
    parts = [{"p_plus": 0.01, "p_minus": 0.99, "effect": 5, "low": 1, "high": 9},
             {"p_plus": 0.2, "p_minus": 0.3, "effect": 1, "low": -1, "high": 3}]
    assert ordered.intersection_union(parts) == {"p_plus": 0.2, "p_minus": 0.3, "effect": 1, "low": -1, "high": 3}


@pytest.mark.parametrize("ps,want", [
    ([0.01, 0.04, 0.03, 0.005], [0.03, 0.06, 0.06, 0.02]),  # by hand: 4*0.005, 3*0.01, max(2*0.03, .03), max(.04, .06)
    ([0.5, 0.001], [0.5, 0.002])])
def test_holm_adjusted_p_values_by_hand(ps, want):
    assert np.allclose(ordered.holm_adjusted(ps), want)


def test_the_family_is_refused_before_all_runs_are_in(tmp_path):
    from collapse_lab.judging.confirm import family
    from collapse_lab.errors import CollapseLabError

    src = Path(__file__).resolve().parents[2] / "docs" / "scale" / "a" / "records" / "runs"
    (tmp_path / "records" / "runs").mkdir(parents=True)
    for p in sorted(src.glob("*-r30.json"))[:35]:
        (tmp_path / "records" / "runs" / p.name).write_text(p.read_text())
    with pytest.raises(CollapseLabError, match="35 of the rung's 36 runs"):
        family(tmp_path, {}, "test")


def test_deviations_correlate_fully_with_themselves_and_not_with_a_shuffle(tmp_path):
    from collapse_lab.judging.confirm import deviation_correlation, deviations

    a = Path(__file__).resolve().parents[2] / "docs" / "scale" / "a"
    assert math.isclose(deviation_correlation(a, a, "er_global"), 1.0)
    dev = deviations(a, "er_global")
    assert all(abs(sum(v)) < 1e-9 and len(v) == 6 for v in dev.values())  # deviations from each setting's mean
