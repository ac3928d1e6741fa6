"""The three-valued verdict of a claim over seeds (docs/scale.md, amendment of 2026-11-28).

Each seed gives each of the claim's m comparisons (a panel, a step of an ordering) an
effect ``[margin, strict, a, b]`` (``claims.effect``: margin > 0 is the claimed direction,
a and b the compared values). Per comparison, the 95 % Student-t interval of the effect
over seeds: paired by seed where the runs of a seed share the partition (they differ only in
the regularizer), Welch's unpaired interval where they do not (another alpha draws another
partition). The claim

- **holds** when every comparison's interval excludes the opposite direction (low > 0, or
  >= 0 where the claim is not strict): the intersection-union test, at 5 % with no
  correction;
- is **refuted** when some comparison excludes the claimed direction after Holm's
  step-down over the m informative comparisons: their one-sided p-values (effect < 0)
  sorted, p_(i) <= 0.025 / (m - i + 1) rejects while it holds, stopping at the first that
  does not. An exact tie in every seed (no spread) fails a strict comparison (p = 0);
- is **uninformative (measure saturated)** when a strict comparison ties in every seed at
  one of the measure's bounds (a count at 0, at k or at the number of classes), or when the
  count sits at such a bound in every seed short of a fixed value the claim needs it to reach:
  the measure cannot see the difference the claim is about (this wins over refuted for that
  comparison);
- is otherwise **not resolved at this scale**, with the seeds that would resolve its open
  comparisons the claimed way at the observed spread: per seed group for a Welch comparison
  (both groups grow), per pair for a paired one; none where an estimate has the wrong sign.
"""
from __future__ import annotations

import functools
import math

HOLDS, REFUTED, OPEN, SATURATED = "holds", "refuted", "not resolved at this scale", "uninformative (measure saturated)"
WORDS = (HOLDS, REFUTED, OPEN, SATURATED)
ALPHA = 0.05  # two-sided: each comparison's interval is 95 %, each one-sided test at 2.5 %


@functools.lru_cache(maxsize=4096)  # the seeds-to-resolve search asks the same quantiles over and over
def _t(q: float, df: float) -> float:
    from scipy.stats import t

    return float(t.ppf(q, df))


def _cdf(x: float, df: float) -> float:
    from scipy.stats import t

    return float(t.cdf(x, df))


def _var(xs: list[float]) -> float:
    n = len(xs)
    m = sum(xs) / n
    return sum((x - m) ** 2 for x in xs) / (n - 1)


def paired(margins: list[float]) -> tuple[float, float, float]:
    """(mean, standard error, degrees of freedom) of the per-seed margins."""
    n = len(margins)
    return sum(margins) / n, math.sqrt(_var(margins) / n), n - 1


def welch(a: list[float], b: list[float], sign: float) -> tuple[float, float, float]:
    """(mean, standard error, Welch-Satterthwaite degrees of freedom) of sign x (mean a -
    mean b), a and b unpaired samples."""
    va, vb, na, nb = _var(a), _var(b), len(a), len(b)
    se2 = va / na + vb / nb
    mean = sign * (sum(a) / na - sum(b) / nb)
    if se2 == 0:
        return mean, 0.0, na + nb - 2
    df = se2 ** 2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1))
    return mean, math.sqrt(se2), df


def _seeds_to_resolve(mean: float, var_a: float, var_b: float | None = None, max_seeds: int = 1000) -> int | None:
    """The fewest seeds whose 95 % interval would exclude 0 on the claimed side at this mean
    and spread: paired (``var_b`` None; ``var_a`` the per-seed margins' variance,
    df m - 1) or Welch (each group's variance, m seeds per group, the Welch-Satterthwaite df at
    m). None: an estimate at 0 or the wrong way (no number of seeds resolves it the claimed
    way), or more than ``max_seeds``."""
    if mean <= 0:
        return None
    if var_a == 0 and not var_b:
        return 2
    for m in range(2, max_seeds + 1):
        if var_b is None:
            se, df = math.sqrt(var_a / m), m - 1
        else:
            se = math.sqrt((var_a + var_b) / m)
            df = (var_a + var_b) ** 2 * (m - 1) / (var_a ** 2 + var_b ** 2)
        if _t(1 - ALPHA / 2, df) * se < mean:
            return m
    return None


def holm(ps: list[float], level: float) -> list[bool]:
    """Holm's step-down: which of the p-values are rejected at family-wise ``level``."""
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    out = [False] * len(ps)
    for rank, i in enumerate(order):
        if ps[i] > level / (len(ps) - rank):
            break
        out[i] = True
    return out


def comparison(effects: list[list], unpaired: bool, bounds: tuple[float, float] | None) -> dict:
    """One comparison over seeds: mean, 95 % interval, one-sided p-value against the claim,
    and its own word."""
    margins = [float(e[0]) for e in effects]
    strict = bool(effects[0][1])
    has_ab = all(len(e) >= 4 for e in effects)
    if unpaired and has_ab:
        a, b = [float(e[2]) for e in effects], [float(e[3]) for e in effects]
        sign = 1.0 if (margins[0] == a[0] - b[0]) else -1.0
        mean, se, df = welch(a, b, sign)
        spread = (_var(a), _var(b))
    else:
        mean, se, df = paired(margins)
        spread = (_var(margins), None)
    half = _t(1 - ALPHA / 2, df) * se
    low, high = mean - half, mean + half
    if se == 0:  # no spread: the value is its interval; a tie fails a strict comparison
        p = 0.0 if (mean < 0 or (mean == 0 and strict)) else 1.0
    else:
        p = _cdf(mean / se, df)
    tied = bool(strict and has_ab and bounds is not None and se == 0 and mean == 0
                and all(float(e[2]) == float(e[3]) and float(e[2]) in bounds for e in effects))
    # a count held at a bound in every seed, against one fixed value it would have to pass: it cannot move there
    stuck = bool(has_ab and bounds is not None and se == 0 and mean < 0 and len({float(e[3]) for e in effects}) == 1
                 and all(float(e[2]) in bounds for e in effects))
    saturated = tied or stuck
    if saturated:
        state = SATURATED
    elif low > 0 or (not strict and low >= 0):
        state = HOLDS
    else:
        state = OPEN  # refuted is decided over the comparisons (Holm)
    out = {"mean": mean, "low": low, "high": high, "strict": strict, "p_against": p,
           "design": "welch" if unpaired and has_ab else "paired", "verdict": state}
    if state == OPEN:
        out["seeds_to_resolve"] = _seeds_to_resolve(mean, *spread)
    return out


def verdict(per_seed_effects: list[list], unpaired: bool = False,
            bounds: tuple[float, float] | None = None) -> dict | None:
    """The claim's verdict from each seed's effects (the same comparisons on every seed);
    None with fewer than two seeds or without effects (module docstring)."""
    if len(per_seed_effects) < 2 or any(not e or len(e) != len(per_seed_effects[0]) for e in per_seed_effects):
        return None
    m = len(per_seed_effects[0])
    comps = [comparison([e[j] for e in per_seed_effects], unpaired, bounds) for j in range(m)]
    live = [c for c in comps if c["verdict"] != SATURATED]
    for c, rejected in zip(live, holm([c["p_against"] for c in live], ALPHA / 2)):
        if rejected:
            c["verdict"] = REFUTED
    states = [c["verdict"] for c in comps]
    word = (REFUTED if REFUTED in states else SATURATED if SATURATED in states and OPEN not in states
            else HOLDS if all(s == HOLDS for s in states) else OPEN)
    out = {"verdict": word, "effects": comps}
    if word == OPEN:
        need = [c.get("seeds_to_resolve") for c in comps if c["verdict"] == OPEN]
        out["seeds_to_resolve"] = None if not need or None in need else max(need)
    return out


def regime_word(word: str, matched: bool | None) -> str:
    """The verdict with its regime: at a rung that is not regime-matched (or whose regime is
    unknown), every word says so ("not resolved at this scale at an unmatched regime"), so a
    bare word always means a matched regime (the regime rule of docs/scale.md)."""
    if matched is True:
        return word
    return f"{word} at an unmatched regime"

