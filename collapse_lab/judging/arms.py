"""Arms against a baseline, paired by seed (docs/beyond/protocol.md): each method or
regularizer's runs against FedAvg's runs of the same seed, per alpha.

Pure functions of per-run rows (a run's evidence, ``analysis.evidence``: its spectra,
floors, accuracy and dead units, and its setting): the measures of the protocol's §2, the
paired differences with their 95 % t intervals, the two claims per arm (global effective
rank, accuracy) judged by the paired t with Holm's step-down at ``level`` in each direction,
and Spearman's rank correlation of the two effects over the arms, by permutation.
"""
from __future__ import annotations

import json
import math

import numpy as np
import torch

from ..spectra.functional import effective_rank, n_relative, tail_share
from . import ordered
from .seeds import t_interval
from .verdict import HOLDS, OPEN, REFUTED, SATURATED

JUDGED = (("er_global", "keeps the global representation wider (effective rank)"),
          ("acc", "is more accurate (test accuracy)"))
DESCRIBED = ("er_client0", "n_global", "n_client0", "tail_global", "dead_units")
MEASURES = tuple(k for k, _ in JUDGED) + DESCRIBED


def arm_name(setting: dict) -> str:
    """A run's arm: its method, or ``fedavg+<reg>`` for FedAvg with a regularizer."""
    method, reg = setting.get("method", "fedavg"), setting.get("reg", "none")
    if reg in (None, "none"):
        return method
    return f"{method}+{reg}"


def measures(row: dict, tail_top: int = 100) -> dict:
    """The protocol's measures of one run's evidence (float64)."""
    out = {"acc": 100.0 * float(row["test_acc"]), "dead_units": float(row["dead_units"])}
    for w in ("global", "client0"):
        s = torch.tensor(row[f"spectrum_{w}"], dtype=torch.float64)
        out[f"er_{w}"] = effective_rank(s, row[f"floor_{w}"])
        out[f"n_{w}"] = float(n_relative(s, 0.01))
        out[f"tail_{w}"] = tail_share(s, tail_top)
    return out


def by_arm(rows: list[dict]) -> dict[str, dict[str, dict[int, dict]]]:
    """{alpha: {arm: {seed: measures}}} of the runs' rows."""
    out: dict = {}
    for r in rows:
        setting = json.loads(r["setting"]) if isinstance(r["setting"], str) else r["setting"]
        out.setdefault(str(r["alpha"]), {}).setdefault(arm_name(setting), {})[int(r["seed"])] = measures(r)
    return out


def _describe(xs: list[float]) -> dict:
    mean, lo, hi = t_interval(xs)
    return {"mean": mean, "low": None if math.isnan(lo) else lo, "high": None if math.isnan(hi) else hi}


def _means(cell: dict[int, dict], seeds: list[int]) -> dict:
    return {k: float(np.mean([cell[s][k] for s in seeds])) for k in MEASURES}


def compare(arms: dict[str, dict[int, dict]], baseline: str, seeds: int, level: float) -> dict:
    """One alpha's comparison: per arm its means, its paired differences from ``baseline``
    (95 % t intervals) and its two claims; arms with fewer than ``seeds`` seeds paired with
    the baseline are left out of the family, with the number they have."""
    base = arms.get(baseline, {})
    rows, claims, left = [], [], []
    for arm in sorted(a for a in arms if a != baseline):
        common = sorted(set(arms[arm]) & set(base))
        if len(common) < seeds:
            left.append({"arm": arm, "why": f"{len(common)} of {seeds} seeds complete beside {baseline}'s"})
            continue
        diff = {k: [arms[arm][s][k] - base[s][k] for s in common] for k in MEASURES}
        rows.append({"arm": arm, "seeds": common, "mean": _means(arms[arm], common),
                     "identical": all(x == 0 for v in diff.values() for x in v),  # the method reduces to it here
                     "spread": {k: _describe([arms[arm][s][k] for s in common]) for k, _ in JUDGED},
                     "diff": {k: _describe(v) for k, v in diff.items()}})
        for key, what in JUDGED if len(common) > 1 else ():  # one seed: described, no test
            values = {round(arms[arm][s][key], 12) for s in common} | {round(base[s][key], 12) for s in common}
            claims.append({"id": f"{arm}-{key}", "arm": arm, "measure": key, "text": f"{arm} {what} than {baseline}",
                           "saturated": len(values) == 1, **ordered.paired(diff[key])})
    _holm(claims, level)
    spread = {k: _describe([base[s][k] for s in sorted(base)]) for k, _ in JUDGED} if base else None
    return {"baseline": baseline, "baseline_mean": _means(base, sorted(base)) if base else None,
            "baseline_spread": spread, "baseline_seeds": sorted(base), "arms": rows,
            "claims": claims, "left_out": left, "link": link(rows)}


def _holm(claims: list[dict], level: float) -> None:
    """Holm's step-down over the family, each direction at ``level``; the verdict words."""
    live = [c for c in claims if not c["saturated"]]
    plus = ordered.holm_adjusted([c["p_plus"] for c in live])
    minus = ordered.holm_adjusted([c["p_minus"] for c in live])
    for c, pp, pm in zip(live, plus, minus):
        c.update(p_plus_holm=pp, p_minus_holm=pm, verdict=HOLDS if pp <= level else REFUTED if pm <= level else OPEN)
    for c in claims:
        if c["saturated"]:
            c.update(p_plus_holm=None, p_minus_holm=None, verdict=SATURATED)


def spearman(x: list[float], y: list[float]) -> float:
    """Spearman's rank correlation (average ranks for ties)."""
    from scipy.stats import rankdata

    rx, ry = rankdata(x), rankdata(y)
    if np.std(rx) == 0 or np.std(ry) == 0:
        return math.nan
    return float(np.corrcoef(rx, ry)[0, 1])


def link(rows: list[dict], permutations: int = ordered.PERMUTATIONS, seed: int = ordered.RNG_SEED) -> dict | None:
    """Exploratory: Spearman's rho over the arms between the mean paired difference in global
    effective rank and in accuracy, with a two-sided permutation p (None below 4 arms)."""
    if len(rows) < 4:
        return None
    x = [r["diff"]["er_global"]["mean"] for r in rows]
    y = [r["diff"]["acc"]["mean"] for r in rows]
    rho = spearman(x, y)
    if math.isnan(rho):
        return {"rho": None, "p": None, "arms": len(rows), "permutations": permutations}
    rng = np.random.Generator(np.random.PCG64(seed))
    from scipy.stats import rankdata

    rx, ry = rankdata(x), rankdata(y)
    rx, ry = (rx - rx.mean()) / rx.std(), (ry - ry.mean()) / ry.std()
    perms = np.argsort(rng.random((permutations, len(ry))), axis=1)
    null = (ry[perms] * rx).mean(axis=1)
    p = (1 + int(np.sum(np.abs(null) >= abs(rho) - 1e-12))) / (permutations + 1)
    return {"rho": rho, "p": p, "arms": len(rows), "permutations": permutations}


def methods_values(params: dict, rows: list[dict], seed: int | None = None, curves: bool = False,
                   missing: list[dict] | None = None) -> dict:
    """The entry's values from its runs' rows (their evidence): per alpha the comparison of
    ``arms.compare``; ``missing``: the runs that are not complete, with why."""
    base = params.get("baseline") or {"method": "fedavg", "reg": "none"}
    baseline = arm_name(base)
    rows = [r for r in rows if seed is None or int(r["seed"]) == seed]
    seeds = len({int(r["seed"]) for r in rows}) if seed is None else 1
    level = float(params.get("level", 0.025))
    panels = [{"alpha": a, **compare(arms, baseline, seeds, level)} for a, arms in sorted(by_arm(rows).items())]
    return {"panels": panels, "missing": missing or [], "not_arms": params.get("not_arms") or {},
            "defaults": params.get("defaults") or {}, "level": level}
