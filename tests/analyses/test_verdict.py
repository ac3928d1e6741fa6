"""The one verdict system (judging/verdict.py, docs/scale.md amendment of 2026-11-28):
intervals against scipy's own tests, the intersection-union rule for holds, Holm's first
step for refuted, Welch across alphas, saturation at a count's bounds, and the regime in the
word."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from collapse_lab.judging.verdict import HOLDS, OPEN, REFUTED, SATURATED, _seeds_to_resolve, holm, regime_word, verdict


def _eff(a: list[float], b: list[float], strict: bool = True) -> list[list]:
    return [[x - y, strict, x, y] for x, y in zip(a, b)]


def test_a_paired_comparison_is_scipys_paired_t_test():
    a, b = [5.1, 4.0, 6.2, 5.5], [4.0, 3.9, 4.4, 5.0]
    c = verdict([[e] for e in _eff(a, b)])["effects"][0]
    d = [x - y for x, y in zip(a, b)]
    want = stats.ttest_1samp(d, 0.0, alternative="less")
    assert c["design"] == "paired" and math.isclose(c["p_against"], want.pvalue, rel_tol=1e-9)
    ci = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
    assert math.isclose(c["low"], ci.low, rel_tol=1e-9) and math.isclose(c["high"], ci.high, rel_tol=1e-9)


def test_across_alphas_the_interval_is_welchs():
    a, b = [10.0, 14.0, 9.0, 12.0], [8.0, 8.5, 7.0, 9.5]
    out = verdict([[e] for e in _eff(a, b)], unpaired=True)
    c = out["effects"][0]
    want = stats.ttest_ind(a, b, equal_var=False, alternative="less")
    ci = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert c["design"] == "welch" and math.isclose(c["p_against"], want.pvalue, rel_tol=1e-9)
    assert math.isclose(c["low"], ci.low, rel_tol=1e-9) and math.isclose(c["high"], ci.high, rel_tol=1e-9)


def test_pairing_matters_where_seeds_share_nothing_but_the_initialisation():
    # a seed effect common to a and b: paired sees a sure difference, Welch does not
    a, b = [10.0, 20.0, 30.0], [9.0, 19.1, 28.9]
    assert verdict([[e] for e in _eff(a, b)])["verdict"] == HOLDS
    assert verdict([[e] for e in _eff(a, b)], unpaired=True)["verdict"] == OPEN


def test_holds_needs_every_comparison_and_refuted_one_after_holm():
    strong = _eff([5.0, 6.0, 7.0, 6.5], [1.0, 1.0, 1.0, 1.0])
    against = _eff([1.0, 1.1, 0.9, 1.05], [2.0, 2.1, 2.05, 1.95])  # t about -40: p far below 0.025 / m
    weak = _eff([1.0, 2.0, 0.5, 1.6], [1.5, 1.0, 1.0, 1.2])
    assert verdict([[s, s] for s in strong])["verdict"] == HOLDS
    assert verdict([[s, w] for s, w in zip(strong, weak)])["verdict"] == OPEN  # intersection-union: not all
    assert verdict([[s, x] for s, x in zip(strong, against)])["verdict"] == REFUTED


def test_holm_does_not_refute_on_a_p_that_only_a_single_test_would():
    d = [-1.0, -0.3, -1.2, -0.5]  # one-sided p 0.0188: below 0.025, above 0.025 / 3
    p = stats.ttest_1samp(d, 0.0, alternative="less").pvalue
    assert 0.025 / 3 < p < 0.025
    one = [[[x, True]] for x in d]
    assert verdict(one)["verdict"] == REFUTED
    many = [[[x, True], [2.0 + i, True], [3.0 + i, True]] for i, x in enumerate(d)]
    assert verdict(many)["verdict"] == OPEN


def test_a_strict_tie_at_the_ceiling_is_saturation_not_refutation():
    ceiling = [[[0.0, True, 100.0, 100.0]] for _ in range(3)]
    assert verdict(ceiling, bounds=(0.0, 100.0))["verdict"] == SATURATED
    assert verdict(ceiling)["verdict"] == REFUTED  # no bounds known: a tie fails a strict claim
    inside = [[[0.0, True, 57.0, 57.0]] for _ in range(3)]
    assert verdict(inside, bounds=(0.0, 100.0))["verdict"] == REFUTED
    mixed = [[[0.0, True, 100.0, 100.0], [-5.0 - i, True, 90.0, 95.0 + i]] for i in range(3)]
    assert verdict(mixed, bounds=(0.0, 100.0))["verdict"] == REFUTED  # the other panel refutes


@pytest.mark.parametrize("word,matched,want", [
    (REFUTED, False, "refuted at an unmatched regime"), (HOLDS, None, "holds at an unmatched regime"),
    (REFUTED, True, REFUTED), (OPEN, True, OPEN), (OPEN, False, f"{OPEN} at an unmatched regime"),
    (SATURATED, None, f"{SATURATED} at an unmatched regime")])
def test_the_word_carries_the_regime(word, matched, want):
    assert regime_word(word, matched) == want



def test_holm_steps_down_where_bonferroni_stops():
    # by hand: 0.005 <= 0.025/3; 0.011 <= 0.025/2 (Bonferroni's 0.025/3 = 0.0083 would stop); 0.5 > 0.025
    assert holm([0.011, 0.5, 0.005], 0.025) == [True, False, True]
    assert holm([0.009, 0.011, 0.02], 0.025) == [False, False, False]  # the smallest fails: nothing is rejected
    assert holm([0.001, 0.002, 0.02], 0.025) == [True, True, True]


def test_refuted_comparisons_follow_holms_step_down():
    first = [-1.0, -1.1, -0.9, -1.05, -0.95, -1.02]       # p about 1e-8
    second = [-0.2, -1.3, -0.1, -1.4, -0.6, -0.9]
    p2 = stats.ttest_1samp(second, 0.0, alternative="less").pvalue
    assert 0.025 / 3 < p2 <= 0.025 / 2  # refuted by Holm's second step, not by Bonferroni
    third = [1.0, 2.0, 3.0, 2.5, 1.5, 2.2]
    out = verdict([[[a, True], [b, True], [c, True]] for a, b, c in zip(first, second, third)])
    assert [c["verdict"] for c in out["effects"]] == [REFUTED, REFUTED, HOLDS]


def test_seeds_to_resolve_a_welch_comparison_grow_both_groups():
    a, b = [10.0, 14.0, 9.0, 12.0], [8.0, 8.5, 7.0, 12.5]
    out = verdict([[e] for e in _eff(a, b)], unpaired=True)
    need = out["seeds_to_resolve"]
    # independent: scipy's Welch interval for m seeds a group at these means and variances
    va, vb, d = float(np.var(a, ddof=1)), float(np.var(b, ddof=1)), float(np.mean(a) - np.mean(b))

    def excludes(m):
        se = math.sqrt((va + vb) / m)
        df = (va / m + vb / m) ** 2 / ((va / m) ** 2 / (m - 1) + (vb / m) ** 2 / (m - 1))
        return d - stats.t.ppf(0.975, df) * se > 0
    assert excludes(need) and not excludes(need - 1)
    paired_need = _seeds_to_resolve(d, (va + vb) / 2)  # the old paired formula with the Welch spread
    assert need > paired_need  # about twice the seeds the paired formula promised


def test_no_number_of_seeds_resolves_a_wrong_sign():
    assert _seeds_to_resolve(-0.5, 1.0) is None and _seeds_to_resolve(0.0, 1.0) is None
    a, b = [10.0, 12.0, 9.0], [11.0, 13.0, 10.5]  # claimed a > b, the estimate says less
    out = verdict([[e] for e in _eff(a, b)], unpaired=True)
    assert out["verdict"] == OPEN and out["seeds_to_resolve"] is None


def test_a_count_held_at_the_number_of_classes_is_uninformative_not_refuted():
    from collapse_lab.spectra.measures import bounds

    b = bounds("n_relative_top", 100, classes=10)
    assert b == (0.0, 100.0, 10.0) and bounds("effective_rank", 100, classes=10) is None
    tie = [[[0.0, True, 10.0, 10.0]] for _ in range(3)]  # 10 (inf) > 10 (0.01) in every seed: a tie at C
    assert verdict(tie, bounds=b)["verdict"] == SATURATED and verdict(tie, bounds=(0.0, 100.0))["verdict"] == REFUTED
    short = [[[10.0 - 90.0, False, 10.0, 90.0]] for _ in range(3)]  # held at C = 10 in every seed, claimed >= 90
    assert verdict(short, bounds=b)["verdict"] == SATURATED
    real = [[[43.0 + i - 90.0, False, 43.0 + i, 90.0]] for i in range(3)]  # off any bound: a refutation stays one
    assert verdict(real, bounds=b)["verdict"] == REFUTED
