"""Arms against a baseline (judging/arms.py, docs/beyond/protocol.md): the paired differences,
Holm over the family and Spearman's rho, each against scipy or a hand computation."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from collapse_lab.judging.arms import by_arm, compare, link, methods_values, spearman


def _row(method: str, reg: str, seed: int, acc: float, spectrum: list[float], dead: int = 0) -> dict:
    setting = {"method": method, "reg": reg, "alpha": "0.05"}
    return {"setting": json.dumps(setting), "seed": seed, "alpha": "0.05", "test_acc": acc, "dead_units": dead,
            "spectrum_global": spectrum, "floor_global": 1e-12, "spectrum_client0": spectrum, "floor_client0": 1e-12}


def _flat(k: int) -> list[float]:
    """k equal singular values (effective rank exactly k), then zeros."""
    return [1.0] * k + [0.0] * (8 - k)


def test_paired_differences_and_their_verdicts_equal_scipy_and_holm_by_hand():
    rows = [_row("fedavg", "none", s, 0.50, _flat(2)) for s in range(3)]
    rows += [_row("moon", "none", s, 0.50 + 0.01 * (s + 1), _flat(4)) for s in range(3)]  # wider in every seed
    rows += [_row("fedprox", "none", s, 0.50 - 0.01 * (s + 1), _flat(2 + (s == 0))) for s in range(3)]
    cmp = compare(by_arm(rows)["0.05"], "fedavg", 3, 0.025)
    acc = {c["arm"]: c for c in cmp["claims"] if c["measure"] == "acc"}
    diffs = [1.0, 2.0, 3.0]  # moon's accuracy minus fedavg's, in points
    assert acc["moon"]["effect"] == pytest.approx(2.0)
    assert acc["moon"]["p_plus"] == pytest.approx(stats.ttest_1samp(diffs, 0.0, alternative="greater").pvalue)
    lo, hi = stats.t.interval(0.95, 2, loc=2.0, scale=stats.sem(diffs))
    assert (acc["moon"]["low"], acc["moon"]["high"]) == (pytest.approx(lo), pytest.approx(hi))
    # Holm over the 4 claims: moon's wider rank has no spread (p+ = 0), so it holds at any level
    er = {c["arm"]: c for c in cmp["claims"] if c["measure"] == "er_global"}
    assert er["moon"]["verdict"] == "holds" and er["moon"]["effect"] == pytest.approx(2.0)
    # the rest by hand: sorted p's times (m - rank), running max
    live = cmp["claims"]
    ps = sorted(c["p_plus"] for c in live)
    adj = np.maximum.accumulate([min(1.0, (4 - i) * p) for i, p in enumerate(ps)])
    assert sorted(c["p_plus_holm"] for c in live) == pytest.approx(list(adj))
    # fedprox: less accurate in every seed, p- = the mirror of moon's p+
    assert acc["fedprox"]["p_minus"] == pytest.approx(acc["moon"]["p_plus"])
    assert acc["fedprox"]["verdict"] == "not resolved at this scale"  # t = 3.46, p = 0.037 > 0.025 at any rank


def test_an_arm_short_of_seeds_leaves_the_family_with_its_line_and_an_identical_arm_is_marked():
    rows = [_row("fedavg", "none", s, 0.5 + 0.01 * s, _flat(2 + s)) for s in range(3)]
    rows += [_row("fedbn", "none", s, 0.5 + 0.01 * s, _flat(2 + s)) for s in range(3)]
    rows += [_row("scaffold", "none", s, 0.4, _flat(3)) for s in range(2)]  # seed 2 diverged
    v = methods_values({}, rows, missing=[{"arm": "scaffold", "seed": 2, "why": "diverged", "run": "x"}])
    panel = v["panels"][0]
    assert [x["arm"] for x in panel["left_out"]] == ["scaffold"] and "2 of 3 seeds" in panel["left_out"][0]["why"]
    assert [r["arm"] for r in panel["arms"]] == ["fedbn"] and panel["arms"][0]["identical"]
    assert {c["verdict"] for c in panel["claims"]} == {"not resolved at this scale"}  # no spread, no difference
    from collapse_lab.analysis.plots.methods import table_md

    md = table_md(v)
    assert "fedbn (equal to fedavg in every seed)" in md and "scaffold: not judged (2 of 3 seeds" in md
    assert "scaffold, seed 2: not complete (diverged)" in md


def test_a_regularizer_on_fedavg_is_its_own_arm_and_a_saturated_measure_is_uninformative():
    rows = [_row("fedavg", "none", s, 0.5, _flat(2)) for s in range(3)]
    rows += [_row("fedavg", "feddecorr", s, 0.5, _flat(2)) for s in range(3)]
    panel = methods_values({}, rows)["panels"][0]
    assert [r["arm"] for r in panel["arms"]] == ["fedavg+feddecorr"]
    assert {c["verdict"] for c in panel["claims"]} == {"uninformative (measure saturated)"}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_spearman_and_its_permutation_p_equal_scipy(seed):
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=12), rng.normal(size=12)
    x[3] = x[4]  # a tie: average ranks
    assert spearman(list(x), list(y)) == pytest.approx(stats.spearmanr(x, y).statistic)
    rows = [{"diff": {"er_global": {"mean": a}, "acc": {"mean": b}}} for a, b in zip(x, y)]
    got = link(rows, permutations=20_000)
    ref = stats.permutation_test((x, y), lambda a, b: stats.spearmanr(a, b).statistic, permutation_type="pairings",
                                 n_resamples=20_000, random_state=seed).pvalue
    assert got["rho"] == pytest.approx(stats.spearmanr(x, y).statistic)
    assert abs(got["p"] - ref) < 0.02  # two Monte Carlo estimates of one p
    assert link(rows[:3]) is None and math.isnan(spearman([1, 1, 1, 1], [1, 2, 3, 4]))


def test_the_figure_numbers_each_arm_by_its_rank_in_the_forest():
    """Panel (a) names its points by number; the number is the arm's row in panel (b),
    counted from the top: 1 for the largest paired difference in global effective rank."""
    from collapse_lab.analysis.plots.methods import numbers

    diffs = {"a": 2.0, "b": -1.0, "c": 5.0, "d": 0.5}
    panel = {"arms": [{"arm": k, "diff": {"er_global": {"mean": v}}} for k, v in diffs.items()]}
    assert numbers(panel) == {"c": 1, "a": 2, "d": 3, "b": 4}
