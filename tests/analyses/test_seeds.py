"""Claims over seeds (judging/seeds.py): the t interval against a table value, the merged
'measured' line by hand, one verdict (the three-valued one) with the direction count beside
it, and a render whose per-seed checks equal the check run on each seed's runs alone."""
from __future__ import annotations

import math

import numpy as np
import pytest

from collapse_lab.analysis import RENDERERS
from collapse_lab.judging.claims import evaluate
from collapse_lab.plan import context
from collapse_lab.judging.seeds import merge_measured, over_seeds, t_interval, verdict_text
from tests.analyses.test_catalogue import _entry, _features, _svals


def test_the_interval_is_students_t_with_n_minus_one_degrees():
    # t(0.975, 2) = 4.302653 (any table); 1, 2, 3: mean 2, s = 1
    m, lo, hi = t_interval([1.0, 2.0, 3.0])
    assert m == 2.0 and math.isclose(hi - m, 4.302653 / math.sqrt(3), rel_tol=1e-6) and math.isclose(m - lo, hi - m)
    m, lo, hi = t_interval([5.0, 7.0])  # t(0.975, 1) = 12.7062; s = sqrt(2)
    assert math.isclose(hi - 6.0, 12.7062 * math.sqrt(2) / math.sqrt(2), rel_tol=1e-5)
    assert math.isnan(t_interval([4.0])[1])


def test_the_measured_lines_merge_number_by_number():
    lines = ["g: 85 (alpha=inf) ≥ 19 (alpha=0.25)", "g: 87 (alpha=inf) ≥ 17 (alpha=0.25)",
             "g: 86 (alpha=inf) ≥ 21 (alpha=0.25)"]
    m1, lo1, hi1 = t_interval([85, 87, 86])
    m2, lo2, hi2 = t_interval([19, 17, 21])
    assert merge_measured(lines) == (f"g: {m1:.4g} [{lo1:.4g}, {hi1:.4g}] (alpha=inf) ≥ "
                                     f"{m2:.4g} [{lo2:.4g}, {hi2:.4g}] (alpha=0.25)")
    assert merge_measured(["a 1 ≥ 2", "a 1 < 3 (claimed ≥)"]) is None  # another shape: shown per seed


@pytest.mark.parametrize("margins,want", [
    ([3.0, 4.0, 5.0], True),    # [1.52, 6.48]: holds
    ([3.0, -1.0, 5.0], False),  # the claimed way in 2 of 3 seeds, but the interval straddles 0: not "holds"
    ([-3.0, -4.0, -5.0], False),
])
def test_holds_is_the_verdict_and_the_seed_count_is_a_direction_count(margins, want):
    rec = lambda m: {"text": "t", "check": "c", "holds": m > 0, "measured": f"x {m}", "effects": [[m, True]]}  # noqa: E731
    out = over_seeds(rec(sum(margins) / 3), [(s, rec(m)) for s, m in enumerate(margins)])
    assert out["holds"] is want and out["claimed_way_in"] == sum(m > 0 for m in margins) and "holds_in" not in out
    assert (out["verdict"] == "holds") is want
    text = verdict_text(out)
    assert f"the claimed way in {sum(m > 0 for m in margins)} of 3 seeds" in text and "holds in" not in text


def test_one_seed_says_it_has_no_interval():
    rec = {"text": "t", "check": "c", "holds": True, "measured": "x 1", "effects": [[1.0, True]]}
    out = over_seeds(rec, [(0, rec)])
    assert out["holds"] is True and "verdict" not in out and verdict_text(out) == "holds (one seed: no interval)"


def test_per_seed_claims_are_the_check_on_each_seeds_runs(store):
    """The shared store holds seeds 0 and 1 of two alphas; the verdict per seed is the check
    on that seed's runs alone, computed here from numpy SVDs of the stored checkpoints."""
    e = _entry("spectra", {"panels": [{"title": "g", "model": "global"}], "top": 100, "tau": 0.01})
    claim = {"text": "more skew, fewer dimensions", "check": "compare", "metric": "n_significant_top", "a": {"alpha": "inf"},
             "b": {"alpha": 0.1}, "op": ">="}
    ctx = context(store, "quick")
    assert ctx.seeds(e) == [0, 1]
    per = {}
    for s in (0, 1):
        values = RENDERERS.get("spectra").compute(e, context(store, "quick", seed=s))
        (panel,) = values["panels"]
        assert all(len(x["runs"]) == 1 and x["runs"][0].split("_s")[-1].startswith(str(s)) for x in panel["series"])
        n_sig = {}
        for x in panel["series"]:
            sv = _svals(_features(store / x["runs"][0], "round_3/global.safetensors"))
            n_sig[x["key"]["alpha"]] = int((sv[:100] > 0.01).sum())
            assert x["metrics"]["n_significant_top"] == n_sig[x["key"]["alpha"]]
        per[s] = evaluate(claim, values)
        assert per[s]["holds"] is (n_sig["inf"] >= n_sig["0.1"])
    means = evaluate(claim, RENDERERS.get("spectra").compute(e, ctx))
    out = over_seeds(means, sorted(per.items()))
    assert out["holds"] is (means["holds"] and all(per[s]["holds"] for s in (0, 1)))
    assert np.isclose(float(means["measured"].split(" ")[-1]),
                      np.mean([float(per[s]["measured"].split(" ")[-1]) for s in (0, 1)]))


def test_seeds_that_disagree_on_a_relation_merge_with_vs():
    lines = ["g: 80 (α = ∞) ≥ 12 (α = 0.05) < (claimed ≥) 13 (α = 0.01)",
             "g: 82 (α = ∞) ≥ 14 (α = 0.05) ≥ 12 (α = 0.01)",
             "g: 79 (α = ∞) ≥ 11 (α = 0.05) < (claimed ≥) 14 (α = 0.01)"]
    out = merge_measured(lines)
    assert out.startswith("g: 80.33 [") and out.count(" vs ") == 2 and "α = ∞" in out and "α = 0.01" in out
    assert merge_measured(lines[1:2] * 3) == lines[1]  # equal lines: as they are


def test_render_checks_each_claim_per_seed_and_writes_the_verdict(store, tmp_path):
    """figures' render() on the shared store (seeds 0 and 1): every claim record carries both
    seeds' verdicts, each equal to the check on that seed's runs alone, and the rule's verdict;
    CLAIMS-quick.md shows them."""
    import dataclasses

    from collapse_lab.catalogue.claims_file import merge_claims
    from collapse_lab.catalogue.render import render_figure as render

    claim = {"text": "more skew, fewer dimensions", "check": "compare", "metric": "n_significant_top", "a": {"alpha": "inf"},
             "b": {"alpha": 0.1}, "op": ">="}
    e = dataclasses.replace(_entry("spectra", {"panels": [{"title": "g", "model": "global"}], "top": 100,
                                               "tau": 0.01}), claims=[claim])
    rec = render(e, context(store, "quick"), tmp_path)
    (c,) = rec["claims"]
    assert c["seeds"] == 2 and [p["seed"] for p in c["per_seed"]] == [0, 1]
    for p in c["per_seed"]:
        alone = evaluate(claim, RENDERERS.get("spectra").compute(e.at("quick"), context(store, "quick", seed=p["seed"])))
        assert (p["holds"], p["measured"]) == (alone["holds"], alone["measured"])
    assert c["holds"] is (c["verdict"] == "holds")
    assert c["claimed_way_in"] == sum(bool(p["holds"]) for p in c["per_seed"])
    merge_claims(tmp_path, "quick", [rec])
    md = (tmp_path / "CLAIMS-quick.md").read_text()
    assert "seed 0: " in md and "seed 1: " in md and f"the claimed way in {c['claimed_way_in']} of 2 seeds" in md


# -- three-valued verdicts (the module itself: tests/analyses/test_verdict.py) ---------------

from collapse_lab.judging.seeds import HOLDS, OPEN, REFUTED, verdict  # noqa: E402


@pytest.mark.parametrize("margins,strict,want", [
    ([3.0, 4.0, 5.0], True, HOLDS),       # mean 4, half-width 4.3027 * 1 / sqrt(3) = 2.484: [1.52, 6.48] > 0
    ([-3.0, -4.0, -5.0], True, REFUTED),  # [-6.48, -1.52] < 0: the claimed direction is excluded
    ([1.0, -1.0, 3.0], True, OPEN),       # mean 1, s 2, half 4.97: straddles 0
    ([0.0, 0.0, 0.0], False, HOLDS),      # a tie every seed, claimed >=: holds
    ([2.0, 2.0, 2.0], True, HOLDS),       # no spread
])
def test_the_verdict_is_the_interval_of_the_paired_effect(margins, strict, want):
    out = verdict([[[m, strict]] for m in margins])
    assert out["verdict"] == want
    m, lo, hi = t_interval(margins)
    if len(set(margins)) > 1:
        assert math.isclose(out["effects"][0]["low"], lo) and math.isclose(out["effects"][0]["high"], hi)


def test_an_open_comparison_says_how_many_seeds():
    holds, open_ = [[3.0, True], [4.0, True], [5.0, True]], [[1.0, True], [-1.0, True], [3.0, True]]
    out = verdict([[h, o] for h, o in zip(holds, open_)])
    assert out["verdict"] == OPEN
    # mean 1, s 2: the fewest n with t(0.975, n - 1) * 2 / sqrt(n) < 1 is 18 (t(0.975, 17) = 2.1098: 0.9946;
    # n = 17: t(0.975, 16) = 2.1199 -> 1.0283)
    assert out["seeds_to_resolve"] == 18
    assert verdict([[[1.0, True]]]) is None  # one seed: no interval


def test_over_seeds_carries_the_verdict_and_the_text_says_both():
    def rec(h, m):
        return {"text": "t", "check": "compare", "holds": h, "measured": f"x {m}", "effects": [[m, True]]}

    out = over_seeds(rec(True, 1.0), [(0, rec(True, 1.0)), (1, rec(False, -1.0)), (2, rec(True, 3.0))])
    assert out["holds"] is False and out["verdict"] == OPEN and out["claimed_way_in"] == 2
    assert verdict_text(out) == ("*not resolved at this scale* (about 18 seeds would resolve it at this spread); "
                                 "the claimed way in 2 of 3 seeds")
