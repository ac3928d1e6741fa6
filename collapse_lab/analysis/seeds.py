"""A claim over seeds: checked on the mean over seeds and on every seed alone, with the
numbers that decide it as a mean and a 95 % interval over seeds.

The rule (docs/catalogue.md): a claim **holds** when it holds for the seed means *and* in at
least n - 1 of n seeds (every seed when n <= 2). With one seed the verdict says so: it
carries no interval. The interval is Student's t over the per-seed values,
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


def needed(n: int) -> int:
    """Seeds a claim must hold in, of n."""
    return n - 1 if n >= 3 else n


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


HOLDS, REFUTED, OPEN = "holds", "refuted", "not resolved at this scale"
MAX_SEEDS = 1000  # beyond this, "more seeds" is not an answer


def seeds_to_resolve(xs: list[float]) -> int | None:
    """The fewest seeds whose 95 % t interval of the mean would exclude 0 at the observed
    mean and spread of ``xs`` (None: a mean of 0 or more than ``MAX_SEEDS``)."""
    n = len(xs)
    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    if mean == 0:
        return None
    if sd == 0:
        return 2
    from scipy.stats import t

    for m in range(2, MAX_SEEDS + 1):
        if float(t.ppf(0.975, m - 1)) * sd / math.sqrt(m) < abs(mean):
            return m
    return None


def verdict(per_seed_effects: list[list]) -> dict | None:
    """The three-valued verdict of a claim from each seed's ``effects`` (``claims.effect``:
    [margin, strict] per comparison, the same comparisons on every seed; paired by seed).
    Per comparison, the 95 % t interval of the margin over seeds: **holds** when it excludes
    the opposite direction (low > 0; >= 0 where the claim is not strict), **refuted** when it
    excludes the claimed one (high < 0; <= 0 where strict); else not resolved. The claim
    holds when every comparison does, is refuted when one is, and is otherwise not resolved
    at this scale, with the seeds that would resolve its unresolved comparisons at the
    observed spread. None with fewer than two seeds or without effects."""
    if len(per_seed_effects) < 2 or any(not e or len(e) != len(per_seed_effects[0]) for e in per_seed_effects):
        return None
    effects, states, need = [], [], []
    for j in range(len(per_seed_effects[0])):
        xs = [float(e[j][0]) for e in per_seed_effects]
        strict = bool(per_seed_effects[0][j][1])
        m, lo, hi = t_interval(xs)
        if len(set(xs)) == 1:
            lo = hi = m  # no spread: the interval is the value
        state = (HOLDS if (lo > 0 or (not strict and lo >= 0)) else
                 REFUTED if (hi < 0 or (strict and hi <= 0)) else OPEN)
        if state == OPEN:
            need.append(seeds_to_resolve(xs))
        states.append(state)
        effects.append({"mean": m, "low": lo, "high": hi, "strict": strict, "verdict": state})
    word = REFUTED if REFUTED in states else HOLDS if all(x == HOLDS for x in states) else OPEN
    out = {"verdict": word, "effects": effects}
    if word == OPEN:
        out["seeds_to_resolve"] = None if None in need else max(need)
    return out


def over_seeds(on_means: dict, per_seed: list[tuple[int, dict]]) -> dict:
    """One claim's record from its check on the seed means and on each seed (``evaluate``'s
    records): ``holds`` by the rule above, ``holds_in`` k of ``seeds`` n, ``over_seeds`` the
    measured numbers as mean [95 % interval], ``per_seed`` every seed's verdict and numbers."""
    n = len(per_seed)
    k = sum(1 for _, c in per_seed if c["holds"] is True)
    if on_means["holds"] is None:
        holds = None
    else:
        holds = bool(on_means["holds"]) and k >= needed(n)
    merged = merge_measured([c["measured"] for _, c in per_seed if c["holds"] is not None])
    three = None if holds is None else verdict([c.get("effects") for _, c in per_seed])
    return {**on_means, "holds": holds, "holds_for_means": on_means["holds"], "seeds": n, "holds_in": k,
            "needed": needed(n), "over_seeds": merged, **(three or {}),
            "per_seed": [{"seed": s, "holds": c["holds"], "measured": c["measured"]} for s, c in per_seed]}


def verdict_text(c: dict) -> str:
    """The three-valued verdict where the claim measures effects ('holds', '**refuted**',
    '*not resolved at this scale* (about 7 seeds would resolve it)'), with the seed count
    beside it: 'holds in 3 of 3 seeds' / '**does not hold** (means: yes; 1 of 3 seeds, 2 needed)'."""
    if c["holds"] is None:
        return "not checked"
    if c.get("verdict"):
        word = {HOLDS: "holds", REFUTED: "**refuted**", OPEN: f"*{OPEN}*"}[c["verdict"]]
        if c["verdict"] == OPEN:
            need = c.get("seeds_to_resolve")
            word += f" (about {need} seeds would resolve it at this spread)" if need else " (no number of seeds would: effect 0 or too small)"
        return f"{word}; {_k_of_n(c)}"
    return _k_of_n(c)


def _k_of_n(c: dict) -> str:
    if "seeds" not in c:
        return "holds" if c["holds"] else "**does not hold**"
    n, k = c["seeds"], c["holds_in"]
    if c["holds"]:
        return f"holds in {k} of {n} seed{'s' if n != 1 else ''}" + (" (one seed: no interval)" if n == 1 else "")
    means = "holds" if c["holds_for_means"] else "does not hold"
    return f"**does not hold** (for the means it {means}; in {k} of {n} seeds, {c['needed']} needed)"
