"""A figure's claim as a check on the numbers it plots.

The values a renderer draws have one shape: ``{"panels": [{"title", "series": [{"label",
"key" (the fields that tell the series apart), "x", "y", "y_std", "n", "metrics":
{name: number}}]}]}``. A check reads them and returns ``(holds, measured)``: whether the
claim holds and the numbers that decide it, in one line, so a claim that does not hold is
reported with its numbers; every check also returns each comparison's ``effect`` (a share of
points against the fraction claimed, a value against its bound), whose interval over seeds
gives the three-valued verdict. Thresholds come from the spec (the catalogue's, or ours where
the paper gives none: the spec says which).
"""
from __future__ import annotations

import math

from ..errors import CollapseLabError
from ..registry import Registry
from .claim_values import OPS, SYMBOL, _digits, _fmt, _hit, _link, _metric, _panels, _say, _two

CHECKS: Registry = Registry("claim check", flag="check")


@CHECKS.register("order")
def order(values: dict, metric: str, by: str, sequence: list, panels: list[int] | None = None,
          direction: str = "nonincreasing", strict_ends: bool = True, where: dict | None = None):
    """In each panel, ``metric`` of the series taken along ``sequence`` of ``by`` values is
    non-increasing (or non-decreasing), and with ``strict_ends`` first > last (<)."""
    ok, said, effects = True, [], []
    for p in _panels(values, panels):
        row = []
        for v in sequence:
            s = [x for x in p["series"] if _hit(x, {by: v, **(where or {})})]
            if len(s) != 1:
                raise CollapseLabError(f"claim order: panel {p['title']!r} has {len(s)} series with {by} = {v}")
            row.append(_metric(s[0], metric))
        sign = 1 if direction == "nonincreasing" else -1
        op = ">=" if sign > 0 else "<="
        links = [sign * (a - b) >= 0 for a, b in zip(row, row[1:])]
        ends = (sign * (row[0] - row[-1]) > 0) if strict_ends else True
        effects += [effect(a, b, op) for a, b in zip(row, row[1:])]
        if strict_ends:
            effects.append(effect(row[0], row[-1], op[0]))
        ok &= all(links) and ends
        d = _digits(*((float(a), float(b)) for a, b in zip(row, row[1:])))
        text = f"{float(row[0]):.{d}g} ({_say(by, sequence[0])})"
        for a, b, v, holds in zip(row, row[1:], sequence[1:], links):
            text += f" {_link(a, b, op, holds)} {float(b):.{d}g} ({_say(by, v)})"
        if all(links) and not ends:
            text += f" (first = last; claimed {SYMBOL[op[0]]})"
        said.append(f"{p['title']}: {text}")
    return ok, "; ".join(said), effects


def _others(series: dict, a: dict, b: dict) -> dict:
    """The key fields a series' partner must share: all but those compared, and, where the
    regularizer is compared, what only a regularizer has (its beta and options: FedAvg's run
    keeps the default beta while FedDecorr's is set, e.g. a ladder's beta rung)."""
    from ..config import MOVED_FIELDS

    compared = {f.partition(".")[0] for f in {**a, **b}}
    if "reg" in compared:
        compared |= {"beta", "reg_options", *MOVED_FIELDS}
    return {k: v for k, v in series["key"].items() if k.partition(".")[0] not in compared}


@CHECKS.register("compare")
def compare(values: dict, metric: str, a: dict, b: dict, op: str = ">", panels: list[int] | None = None):
    """``metric`` of each series matching ``a`` op that of the series matching ``b`` with
    the same value of every other key field, in every panel."""
    ok, said, pairs, effects = True, [], 0, []
    for p in _panels(values, panels):
        for sa in (s for s in p["series"] if _hit(s, a)):
            rest = _others(sa, a, b)
            for sb in (s for s in p["series"] if _hit(s, {**rest, **b}) and s is not sa):
                va, vb = _metric(sa, metric), _metric(sb, metric)
                holds = OPS[op](va, vb)
                ok &= holds
                pairs += 1
                effects.append(effect(va, vb, op))
                fa, fb = _two(va, vb)
                said.append(f"{p['title']}: {sa['label']} {fa} {_link(va, vb, op, holds)} {sb['label']} {fb}")
    if not pairs:
        raise CollapseLabError(f"claim compare: no pair of series matches {a} and {b}")
    return ok, "; ".join(said), effects


@CHECKS.register("threshold")
def threshold(values: dict, metric: str, op: str, value: float, where: dict | None = None,
              panels: list[int] | None = None, absolute: bool = False, times_metric: str | None = None):
    """``metric`` (its absolute value with ``absolute``) of every matching series op
    ``value`` (times the series' ``times_metric``, e.g. 0.9 x the number of indices)."""
    ok, said, effects = True, [], []
    for p in _panels(values, panels):
        for s in (s for s in p["series"] if _hit(s, where or {})):
            v = _metric(s, metric)
            v = abs(v) if absolute else v
            t = value * (_metric(s, times_metric) if times_metric else 1)
            holds = OPS[op](v, t)
            ok &= holds
            effects.append(effect(v, t, op))
            fv, ft = _two(v, t)
            said.append(f"{p['title']}: {s['label']} {'|' + metric + '|' if absolute else metric} {fv} "
                        f"{_link(v, t, op, holds)} {ft}")
    return ok, "; ".join(said), effects


@CHECKS.register("pointwise")
def pointwise(values: dict, by: str, sequence: list, fraction: float = 0.9, panels: list[int] | None = None):
    """Along ``sequence`` (e.g. alpha inf -> 0.01), each next curve is at or below the
    previous at >= ``fraction`` of the shared x."""
    ok, said, effects = True, [], []
    for p in _panels(values, panels):
        curves = []
        for v in sequence:
            s = [x for x in p["series"] if _hit(x, {by: v})]
            curves.append(s[0]["y"])
        for (v1, c1), (v2, c2) in zip(zip(sequence, curves), list(zip(sequence, curves))[1:]):
            n = min(len(c1), len(c2))
            share = sum(c2[i] <= c1[i] for i in range(n)) / max(n, 1)
            ok &= share >= fraction
            effects.append(effect(share, fraction, ">="))
            said.append(f"{p['title']}: {_say(by, v2)} ≤ {_say(by, v1)} at {share:.0%} of k")
    return ok, "; ".join(said), effects


@CHECKS.register("above")
def above(values: dict, a: dict, b: dict, fraction: float = 0.8, skip: float = 0.1, panels: list[int] | None = None):
    """The curve of ``a`` is above that of ``b`` (same other key fields) at >= ``fraction``
    of the x after the first ``skip`` share of them."""
    ok, said, pairs, effects = True, [], 0, []
    for p in _panels(values, panels):
        for sa in (s for s in p["series"] if _hit(s, a)):
            rest = _others(sa, a, b)
            for sb in (s for s in p["series"] if _hit(s, {**rest, **b}) and s is not sa):
                n = min(len(sa["y"]), len(sb["y"]))
                start = int(math.floor(skip * n))
                idx = range(start, n)
                share = sum(sa["y"][i] > sb["y"][i] for i in idx) / max(len(idx), 1)
                ok &= share >= fraction
                effects.append(effect(share, fraction, ">="))
                pairs += 1
                said.append(f"{p['title']}: {sa['label']} above {sb['label']} at {share:.0%} of x ≥ {start}")
    if not pairs:
        raise CollapseLabError(f"claim above: no pair of series matches {a} and {b}")
    return ok, "; ".join(said), effects


@CHECKS.register("near_best")
def near_best(values: dict, x: float, tolerance: float, panels: list[int] | None = None):
    """Each series' y at ``x`` is within ``tolerance`` of its best y."""
    ok, said, effects = True, [], []
    for p in _panels(values, panels):
        for s in p["series"]:
            i = min(range(len(s["x"])), key=lambda j: abs(float(s["x"][j]) - x))
            best = max(s["y"])
            holds = s["y"][i] >= best - tolerance
            ok &= holds
            effects.append(effect(s["y"][i], best - tolerance, ">="))
            said.append(f"{p['title']}: y({_fmt(float(s['x'][i]))}) = {_fmt(s['y'][i])}, best {_fmt(best)}"
                        + ("" if holds else " (no)"))
    return ok, "; ".join(said), effects


@CHECKS.register("rises_first")
def rises_first(values: dict, tolerance: float = 0.0, panels: list[int] | None = None):
    """Each series is not decreasing from its first x to its second (rise or plateau first)."""
    ok, said, effects = True, [], []
    for p in _panels(values, panels):
        for s in p["series"]:
            holds = s["y"][1] >= s["y"][0] - tolerance
            ok &= holds
            effects.append(effect(s["y"][1], s["y"][0] - tolerance, ">="))
            said.append(f"{p['title']}: {_fmt(s['y'][0])} -> {_fmt(s['y'][1])}" + ("" if holds else " (no)"))
    return ok, "; ".join(said), effects


@CHECKS.register("settles")
def settles(values: dict, max_rise: float = 0.2, panels: list[int] | None = None, points: int | None = None):
    """Each series ends at or below where it starts, and never rises by more than
    ``max_rise`` (relative) from one x to the next. ``points``: how many x the claim reads
    (ICLR Fig. 11: 10 local epochs); runs with fewer (an override) cannot test it."""
    ok, said, worst = True, [], 0.0
    bad, effects = [], []
    for p in _panels(values, panels):
        for s in p["series"]:
            y = s["y"]
            if points is not None and len(y) < points:
                raise CollapseLabError(f"the claim reads {points} points of each series and these runs have {len(y)} "
                                       "(their settings, e.g. a --set, leave too few to test it)")
            rises = [(b - a) / abs(a) if a else 0.0 for a, b in zip(y, y[1:])]
            w = max(rises, default=0.0)
            worst = max(worst, w)
            holds = y[-1] <= y[0] and w <= max_rise
            ok &= holds
            effects += [effect(y[0], y[-1], ">="), effect(max_rise, w, ">=")]
            if not holds:
                bad.append(f"{s['label']} {_fmt(y[0])} -> {_fmt(y[-1])}, largest rise {w:.0%}")
    said.append(f"{sum(len(p['series']) for p in _panels(values, panels))} series, largest rise {worst:.1%}")
    return ok, "; ".join(said + bad), effects


@CHECKS.register("exceeds")
def exceeds(values: dict, metric: str, other: str, where: dict | None = None, panels: list[int] | None = None):
    """In every matching series, ``metric`` > ``other`` (two numbers of the same series)."""
    ok, said, effects = True, [], []
    for p in _panels(values, panels):
        for s in (s for s in p["series"] if _hit(s, where or {})):
            a, b = _metric(s, metric), _metric(s, other)
            ok &= a > b
            effects.append(effect(a, b, ">"))
            fa, fb = _two(a, b)
            said.append(f"{p['title']}: {metric} {fa} {_link(a, b, '>', a > b)} {other} {fb}")
    return ok, "; ".join(said), effects


def effect(a: float, b: float, op: str) -> list:
    """A comparison's effect in the claimed direction: ``[margin, strict, a, b]`` with margin
    > 0 (>= 0 where not strict) when ``a op b`` holds (a - b for > and >=, b - a for < and
    <=), and the compared values; over seeds it decides the three-valued verdict
    (``judging.verdict``: paired by seed, or Welch's on a and b)."""
    a, b = float(a), float(b)
    return [a - b if op in (">", ">=") else b - a, op in (">", "<"), a, b]


def design(claim: dict, values: dict) -> dict:
    """How the claim's comparisons are read over seeds: ``unpaired`` where they compare runs
    at different alphas (another alpha draws another partition: Welch), and the ``bounds``
    of its metric where it is a count among the top k (0, k and the number of classes: a tie
    there is saturation)."""
    from ..spectra.measures import bounds

    if claim.get("check") == "order":
        varied = {claim.get("by")}
    else:
        varied = {k.partition(".")[0] for k in {**(claim.get("a") or {}), **(claim.get("b") or {})}}
    tops = [s["metrics"].get("top") for p in values.get("panels", []) for s in p.get("series", [])
            if isinstance(s.get("metrics"), dict) and s["metrics"].get("top") is not None]
    classes = {s["metrics"].get("classes") for p in values.get("panels", []) for s in p.get("series", [])
               if isinstance(s.get("metrics"), dict)} - {None}
    b = (bounds(claim["metric"], int(max(tops)), classes.pop() if len(classes) == 1 else None)
         if claim.get("metric") and tops else None)
    return {"unpaired": "alpha" in varied, **({"bounds": list(b)} if b else {})}


# what a claim says about itself, not a check's parameter: its ``form`` (``literal``, the
# paper's words at the paper's scale, or ``scale-free``, the same statement read at any scale)
# and the paper's sentence it ``reads``
ABOUT = ("form", "reads")


def evaluate(claim: dict, values: dict) -> dict:
    """One claim of a spec on the values: ``{text, check, holds, measured}``, and
    ``effects`` (``effect`` of each comparison) where the check measures them."""
    params = {k: v for k, v in claim.items() if k not in ("text", "check", *ABOUT)}
    holds, measured, *rest = CHECKS.call(claim["check"], values, **params)
    out = {"text": claim["text"], "check": claim["check"], "holds": bool(holds), "measured": measured,
           **{k: claim[k] for k in ABOUT if k in claim}, **design(claim, values)}
    return {**out, "effects": rest[0]} if rest else out


def evaluate_safely(claim: dict, values: dict) -> dict:
    """``claims.evaluate``, or the claim marked not checked with the reason (one line)."""
    try:
        return evaluate(claim, values)
    except CollapseLabError as e:
        return {"text": claim["text"], "check": claim["check"], "holds": None, "measured": f"not checked: {e}"}
