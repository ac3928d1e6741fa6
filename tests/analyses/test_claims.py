"""Claims print what they compare, in the order they compare it, and every printed
inequality is true as printed (a failed claim shows the measured relation and the claimed one)."""
from __future__ import annotations

import random
import re

from collapse_lab.judging.claims import compare, exceeds, order, threshold


def _values(metric_by_alpha: dict) -> dict:
    return {"panels": [{"title": "global", "series": [
        {"label": f"series {'ABCD'[i]}", "key": {"alpha": a}, "x": [1], "y": [v], "metrics": {"n_sig": v, "other": 0.5}}
        for i, (a, v) in enumerate(metric_by_alpha.items())]}]}


REL = {">": lambda a, b: a > b, "<": lambda a, b: a < b, "=": lambda a, b: a == b, "≥": lambda a, b: a >= b,
       "≤": lambda a, b: a <= b}


def _printed_links(text: str) -> list[tuple[float, str, float]]:
    """(left, relation, right) for every inequality printed between two numbers; the
    claimed symbol in brackets is not a statement about the numbers."""
    text = re.sub(r" \(claimed [^)]*\)", "", text)
    text = re.sub(r" \((α|β) = [^)]*\)", "", text)  # the chain's labels
    nums = r"(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)"
    return [(float(a), r, float(b)) for a, r, b in re.findall(r"(?<![\d.])(?=" + nums + r" ([<>=≥≤]) (?:[^\d\s;]+ )*" + nums + ")", text)]


def test_a_chain_that_fails_prints_the_measured_relations():
    holds, said, _ = order(_values({"inf": 5.0, "0.25": 7.0, "0.05": 3.0}), "n_sig", "alpha", ["inf", "0.25", "0.05"])
    assert not holds
    assert said == "global: 5 (α = ∞) < (claimed ≥) 7 (α = 0.25) ≥ 3 (α = 0.05)"
    holds, said, _ = order(_values({"inf": 4.0, "0.05": 4.0}), "n_sig", "alpha", ["inf", "0.05"])
    assert not holds and said == "global: 4 (α = ∞) ≥ 4 (α = 0.05) (first = last; claimed >)"


def test_close_numbers_get_the_digits_that_tell_them_apart():
    holds, said, _ = order(_values({"inf": 3.14159, "0.05": 3.14158}), "n_sig", "alpha", ["inf", "0.05"])
    assert holds and said == "global: 3.14159 (α = ∞) ≥ 3.14158 (α = 0.05)"
    holds, said, _ = compare(_values({"inf": 2.00001, "0.05": 2.00002}), "n_sig", {"alpha": "inf"}, {"alpha": "0.05"})
    assert not holds and "2.00001 < (claimed >)" in said and said.endswith("2.00002")


def test_every_printed_inequality_is_true_on_random_values():
    rng = random.Random(0)
    for _ in range(300):
        vals = {a: rng.choice([rng.random(), round(rng.random(), 1), 1.0 + rng.random() * 1e-6])
                for a in ("inf", "0.25", "0.05", "0.01")}
        values = _values(vals)
        texts = [order(values, "n_sig", "alpha", list(vals))[1],
                 order(values, "n_sig", "alpha", list(vals), direction="nondecreasing")[1],
                 compare(values, "n_sig", {"alpha": "inf"}, {"alpha": "0.01"}, op=rng.choice(["<", ">", ">=", "<="]))[1],
                 threshold(values, "n_sig", rng.choice(["<", ">"]), 0.5)[1],
                 exceeds(values, "n_sig", "other")[1]]
        for text in texts:
            links = _printed_links(text)
            assert len(links) >= (3 if text.count("α = ") == 4 else 1), text  # every link of a chain is read
            for a, r, b in links:
                assert REL[r](a, b), (text, a, r, b)


def test_every_check_returns_its_effects_in_the_claimed_direction():
    """The effects the three-valued verdict reads (issue 48), by hand: a - b where a > b is
    claimed, the share of points against the fraction claimed, a value against its bound."""
    from collapse_lab.judging.claims import above, pointwise, rises_first, settles

    v = _values({"inf": 5.0, "0.05": 3.0})
    # [margin, strict, a, b]: the compared values ride along (Welch across alphas, saturation)
    assert compare(v, "n_sig", {"alpha": "inf"}, {"alpha": "0.05"}, ">")[2] == [[2.0, True, 5.0, 3.0]]
    assert compare(v, "n_sig", {"alpha": "inf"}, {"alpha": "0.05"}, "<=")[2] == [[-2.0, False, 5.0, 3.0]]
    assert order(v, "n_sig", "alpha", ["inf", "0.05"])[2] == [[2.0, False, 5.0, 3.0], [2.0, True, 5.0, 3.0]]
    assert threshold(v, "n_sig", ">=", 4.0, where={"alpha": "inf"})[2] == [[1.0, False, 5.0, 4.0]]
    assert exceeds(v, "n_sig", "other", where={"alpha": "0.05"})[2] == [[2.5, True, 3.0, 0.5]]
    curves = {"panels": [{"title": "g", "series": [
        {"label": "A", "key": {"alpha": "inf"}, "x": [1, 2, 3, 4], "y": [4.0, 3.0, 2.0, 1.0], "metrics": {}},
        {"label": "B", "key": {"alpha": "0.05"}, "x": [1, 2, 3, 4], "y": [3.0, 3.5, 1.0, 0.5], "metrics": {}}]}]}
    # B <= A at 3 of 4 points: 0.75 against 0.9 claimed
    assert [e[:2] for e in pointwise(curves, "alpha", ["inf", "0.05"], fraction=0.9)[2]] == [[0.75 - 0.9, False]]
    # A above B after skipping the first 0 points: at 3 of 4 (not at x=2)
    got = above(curves, {"alpha": "inf"}, {"alpha": "0.05"}, fraction=0.5, skip=0.0)[2]
    assert [e[:2] for e in got] == [[0.75 - 0.5, False]]
    assert [e[:2] for e in rises_first(curves)[2]] == [[3.0 - 4.0, False], [3.5 - 3.0, False]]
    # A: 4 -> 1, its largest step -1/4 (a fall); B: 3 -> 0.5, its largest step a rise of 0.5/3
    eff = settles(curves, max_rise=0.2)[2]
    assert [e[:2] for e in eff[:2]] == [[3.0, False], [0.2 + 0.25, False]] and eff[2][0] == 2.5
    assert abs(eff[3][0] - (0.2 - 0.5 / 3.0)) < 1e-12


def test_compare_pairs_a_regularized_series_with_fedavg_whatever_its_beta():
    """FedAvg's runs keep the default beta where FedDecorr's is set (a ladder's beta rung):
    comparing reg pairs them; a claim that compares something else still needs equal beta."""
    from collapse_lab.judging.claims import CHECKS

    def ser(reg, beta, v, alpha="0.05"):
        return {"key": {"reg": reg, "beta": beta, "alpha": alpha}, "label": f"{reg} {beta}", "metrics": {"m": v}}

    values = {"panels": [{"title": "p", "series": [ser("none", 0.1, 5), ser("feddecorr", 0.3, 7),
                                                    ser("none", 0.1, 4, "0.01"), ser("feddecorr", 0.3, 3, "0.01")]}]}
    ok, said, effects = CHECKS.get("compare")(values, "m", {"reg": "feddecorr"}, {"reg": "none"})
    assert ok is False and [e[0] for e in effects] == [2, -1] and len(said.split("; ")) == 2
