"""A claim over seeds: checked on the mean over seeds and on every seed alone, with the
numbers that decide it as a mean and a 95 % interval over seeds.

The verdict is the three-valued one of ``judging.verdict`` (docs/scale.md): holds, refuted,
not resolved at this scale, or uninformative where the measure is saturated. Beside it the
seeds in which the claim points the claimed way, a direction count. With one seed the check
is said without an interval. The interval is Student's t over the per-seed values,
mean +- t(0.975, n - 1) * s / sqrt(n) (s the sample standard deviation), as the papers
report mean and spread over 3 seeds (FedDecorr Tables 1-10).
"""
from __future__ import annotations

import math
import re

# a number as the checks print them (4.123, 85, 1e-05, -0.2), not part of a word (client_0)
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w])")
# the relation a check prints between two numbers, as it measured it on that seed ("≥",
# "< (claimed ≥)"): seeds may differ in it, so over seeds the numbers are joined by "vs"
RELATION = re.compile(r"(?<=[\d)]) [<>=≤≥?](?: \(claimed [<>=≤≥]\))? (?=-?\d)")


def t_interval(xs: list[float]) -> tuple[float, float, float]:
    """(mean, low, high): the two-sided 95 % Student-t interval of the mean; low = high =
    nan for one value."""
    n = len(xs)
    mean = sum(xs) / n
    if n < 2:
        return mean, math.nan, math.nan
    from scipy.stats import t

    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    half = float(t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def merge_measured(texts: list[str]) -> str | None:
    """The per-seed 'measured' lines of one claim as one line: the numbers that differ
    between seeds as ``mean [low, high]``, the others as they are; None when the lines do
    not have the same shape (then the per-seed lines are shown)."""
    if not texts:
        return None
    relations = [RELATION.findall(t) for t in texts]
    if any(r != relations[0] for r in relations):  # the seeds disagree on a relation: say "vs"
        texts = [RELATION.sub(" vs ", t) for t in texts]
    shapes = [NUMBER.split(t) for t in texts]
    numbers = [NUMBER.findall(t) for t in texts]
    if any(s != shapes[0] for s in shapes) or any(len(n) != len(numbers[0]) for n in numbers):
        return None
    out = [shapes[0][0]]
    for i, rest in enumerate(shapes[0][1:]):
        col = [n[i] for n in numbers]
        if len(set(col)) == 1:
            out.append(col[0])
        else:
            m, lo, hi = t_interval([float(v) for v in col])
            out.append(f"{m:.4g} [{lo:.4g}, {hi:.4g}]")
        out.append(rest)
    return "".join(out)


from .verdict import HOLDS, OPEN, REFUTED, SATURATED, verdict  # noqa: E402  (the one verdict system)


def over_seeds(on_means: dict, per_seed: list[tuple[int, dict]]) -> dict:
    """One claim's record from its check on the seed means and on each seed (``evaluate``'s
    records): the three-valued ``verdict`` (``judging.verdict``) and ``holds`` = it holds
    (with one seed, no interval: the check on that seed); ``claimed_way_in`` k of ``seeds``
    n, the seeds in which the claim's every comparison points the claimed way (a direction
    count, not a verdict); ``over_seeds`` the measured numbers as mean [95 % interval];
    ``per_seed`` every seed's numbers."""
    n = len(per_seed)
    k = sum(1 for _, c in per_seed if c["holds"] is True)
    first = per_seed[0][1] if per_seed else {}
    three = None
    if on_means["holds"] is not None:
        three = verdict([c.get("effects") for _, c in per_seed], bool(first.get("unpaired")),
                        tuple(first["bounds"]) if first.get("bounds") else None)
    if on_means["holds"] is None:
        holds = None
    elif three is not None:
        holds = three["verdict"] == HOLDS
    else:  # one seed (or a check without effects): the check itself, said without an interval
        holds = bool(on_means["holds"]) and k == n
    merged = merge_measured([c["measured"] for _, c in per_seed if c["holds"] is not None])
    return {**on_means, "holds": holds, "holds_for_means": on_means["holds"], "seeds": n, "claimed_way_in": k,
            "over_seeds": merged, **(three or {}),
            "per_seed": [{"seed": s, "holds": c["holds"], "measured": c["measured"]} for s, c in per_seed]}


def verdict_text(c: dict) -> str:
    """The verdict with the direction count beside it: 'holds; the claimed way in 3 of 3
    seeds', '**refuted**; ...', '*not resolved at this scale* (about 7 seeds would resolve it
    at this spread); ...'; with one seed 'holds (one seed: no interval)'."""
    if c["holds"] is None:
        return "not checked"
    if c.get("verdict"):
        word = {HOLDS: "holds", REFUTED: "**refuted**", OPEN: f"*{OPEN}*", SATURATED: f"*{SATURATED}*"}[c["verdict"]]
        if c["verdict"] == OPEN:
            need = c.get("seeds_to_resolve")
            word += (f" (about {need} seeds would resolve it at this spread)" if need
                     else " (no number of seeds would resolve it the claimed way: an estimate at 0 or the wrong way, or too small)")
        return f"{word}; {_k_of_n(c)}"
    if "seeds" not in c or c["seeds"] <= 1:
        return ("holds" if c["holds"] else "**does not hold**") + (" (one seed: no interval)" if c.get("seeds") == 1 else "")
    return _k_of_n(c)


def _k_of_n(c: dict) -> str:
    n, k = c["seeds"], c.get("claimed_way_in", 0)
    return f"the claimed way in {k} of {n} seed{'s' if n != 1 else ''}"
