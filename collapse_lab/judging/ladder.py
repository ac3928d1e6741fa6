"""The ladder's rule (docs/scale.md): per rung and entry, the regime its runs reached and the
rule that reads it, Table 1's accuracy comparison where an entry's runs vary the
regularizer, how a record without evidence keeps its verdicts, the choice of rung per
entry, and the words and effects a verdict is printed with.

Pure functions on the records the ladder keeps (one JSON file per rung and entry); the
claims a record's evidence gives are recomputed by the analysis (``analysis.ladder``).
"""
from __future__ import annotations

import json
import math
import re

from .seeds import t_interval
from .verdict import HOLDS, OPEN, REFUTED, SATURATED, regime_word, verdict

# the rule of docs/scale.md (committed before any rung's claims were computed)
OWN_ACC_MIN = 0.90  # pooled accuracy of the clients' final local models on their own data, every run
PLATEAU_MAX = 1.0  # points: |seed-mean test accuracy at R - seed-mean at R - 3|, every setting (the rule
# until 2026-11-28, reported beside the slope rule of judging/plateau.py, which decides where a record
# keeps the accuracy curves)
DEAD_MAX = 0.10  # share of dead units of the final global model, every run without a regularizer
BUDGET_S = 3600.0  # an entry's runs from an empty store on 2 cores


def summary(measures: list[dict]) -> dict:
    """The regime of an entry's runs at a rung: each criterion's deciding number and
    whether it passes (None: not measured, e.g. the clients' checkpoints were not kept)."""
    own = [m.get("own_acc") for m in measures]
    own_min = None if not own or any(o is None for o in own) else min(own)
    by_setting: dict[str, list[float]] = {}
    for m in measures:
        by_setting.setdefault(m["setting"], []).append(m.get("plateau_points"))
    changes = [sum(v) / len(v) for v in by_setting.values() if v and all(x is not None for x in v)]
    plateau_max = None if len(changes) != len(by_setting) or not changes else max(abs(c) for c in changes)
    slope = slope_rule(measures)
    plain = [m["dead_units"] / m["units"] for m in measures if m.get("reg") == "none"]
    dead_max = max(plain) if plain else None
    secs = [m.get("train_seconds") for m in measures]
    old = None if plateau_max is None else plateau_max < PLATEAU_MAX
    checks = {"clients": None if own_min is None else own_min >= OWN_ACC_MIN,
              "plateau": old if slope is None else slope["plateaued"],
              "dead": None if dead_max is None else dead_max < DEAD_MAX}
    return {"own_acc_min": own_min, "plateau_max_points": plateau_max, "plateau_old_rule": old,
            **({"plateau_slope": slope} if slope is not None else {}), "dead_share_max_fedavg": dead_max,
            "train_seconds_sum": None if any(s is None for s in secs) else round(sum(secs), 1),
            "checks": checks, "matched": all(v is True for v in checks.values())}


def slope_rule(measures: list[dict]) -> dict | None:
    """The plateau by the slope rule (``judging.plateau``) over every setting, where each
    run keeps its accuracy curve: the setting furthest from flat (largest |seed-mean slope|),
    its window and upper bound, and whether every setting has plateaued; None without
    curves (a record of format 1)."""
    from .plateau import plateau

    by: dict[str, list] = {}
    for m in measures:
        by.setdefault(m["setting"], []).append(m.get("acc_curve"))
    if not by or any(c is None or None in c for cs in by.values() for c in cs):
        return None
    per = {k: plateau(cs) for k, cs in by.items() if len(cs) >= 2}
    if len(per) != len(by):
        return None
    worst = max(per, key=lambda k: abs(per[k]["slope_mean"]))
    w = per[worst]
    return {"window": w["window"], "slope_mean_worst": w["slope_mean"], "slope_upper_worst": w["slope_upper"],
            "worst_setting": worst, "plateaued": all(p["plateaued"] for p in per.values()),
            "settings_plateaued": sum(p["plateaued"] for p in per.values()), "settings": len(per)}


def but_reg(setting: str) -> str:
    """A run's setting (its identity but the seed, as JSON) without what names its
    regularizer: the FedAvg run a regularized run is compared with has it."""
    from ..config import MOVED_FIELDS

    d = json.loads(setting)
    return json.dumps({k: v for k, v in d.items() if k not in ("reg", "beta", "reg_options", *MOVED_FIELDS)},
                      sort_keys=True)


TABLE1_ALPHAS = ("0.05", "0.1", "0.5", "inf")  # FedDecorr Table 1's columns


def accuracy_claims(measures: list[dict]) -> list[dict]:
    """Table 1's comparison where the runs vary the regularizer: final global test accuracy
    with a regularizer minus without, paired by seed, per setting, as a three-valued verdict
    (``seeds.verdict``); the claim (FedDecorr Table 1) is that it is higher."""
    key = {id(m): but_reg(m["setting"]) for m in measures}
    base = {(key[id(m)], m["seed"]): m for m in measures if m.get("reg") == "none"}
    out = []
    groups: dict[tuple, list] = {}
    for m in measures:
        if m.get("reg") not in (None, "none") and (key[id(m)], m["seed"]) in base:
            groups.setdefault((m["reg"], key[id(m)], m.get("alpha")), []).append(m)
    for (reg, _, alpha), ms in sorted(groups.items(), key=lambda kv: (kv[0][0], str(kv[0][2]))):
        ms = sorted(ms, key=lambda m: m["seed"])
        pairs = [(100.0 * m["test_acc"], 100.0 * base[(key[id(m)], m["seed"])]["test_acc"]) for m in ms]
        diffs = [a - b for a, b in pairs]
        v = verdict([[[a - b, True, a, b]] for a, b in pairs]) or {}  # paired: the same seed's partition
        mean, lo, hi = t_interval(diffs)
        k = sum(d > 0 for d in diffs)
        where = ("Table 1's comparison" if str(alpha) in TABLE1_ALPHAS
                 else "as Table 1 compares; not one of its columns, 0.05, 0.1, 0.5 and inf")
        out.append({"text": f"final global test accuracy: FedAvg + {reg} > FedAvg at alpha {alpha} ({where})",
                    "check": "accuracy", "form": "literal", "holds": v.get("verdict") == HOLDS if v else mean > 0,
                    "measured": f"{reg} - none: {mean:+.2f} points [{lo:.2f}, {hi:.2f}] (seeds: "
                                + ", ".join(f"{d:+.2f}" for d in diffs) + ")",
                    "seeds": len(diffs), "claimed_way_in": k, **v})
    return out


def cost(r: dict) -> float:
    """A rung's cost for the rule: the project's estimate of its runs on 2 cores from an empty
    store (``plan.estimate``: images x FLOPs at measured rates; the same on any machine and
    under any load; the ladder recomputes it for kept records, so a rate measured later
    applies to every rung), where the record has it; else the measured training time over 2
    workers (which a loaded machine inflates)."""
    est = r.get("estimated_seconds")
    if est is not None:
        return float(est)
    secs = r["regime"].get("train_seconds_sum")
    return math.inf if secs is None else secs / 2


def has_evidence(rec: dict) -> bool:
    """Whether a record keeps each run's curves and spectra (format 2 on)."""
    runs = rec.get("regime", {}).get("runs", [])
    return bool(runs) and all("spectrum_global" in m and "acc_curve" in m for m in runs)


_TITLES = re.compile(r"α = [^,:)]+|client \d+|\(\w\)")


def legacy(c: dict, metric: str | None = None) -> dict:
    """A claim kept by a record without evidence: its verdict as kept (paired by seed, no
    correction over panels), but uninformative where a count claim among the top 100
    (``metric`` one of the bounded counts) tied at 100 (or 0) in every seed and every
    comparison, one of them strict: the kept numbers say so."""
    from ..spectra.measures import bounds
    from .seeds import NUMBER

    effs = c.get("effects") or []
    texts = [p.get("measured", "") for p in c.get("per_seed", [])] or [c.get("measured", "")]
    nums = {x for t in texts for x in NUMBER.findall(_TITLES.sub("", t))}
    ties = bool(effs) and all(e.get("mean") == e.get("low") == e.get("high") == 0 for e in effs)
    at_bound = metric is not None and bounds(metric, 100) is not None and nums and nums <= {"100", "0"}
    if c.get("verdict") and ties and any(e.get("strict") for e in effs) and at_bound:
        return {**c, "verdict": SATURATED, "legacy": True}
    return {**c, "legacy": True} if c.get("verdict") else c


def choose(records: list[dict], budget_s: float = BUDGET_S) -> dict[str, dict]:
    """Per entry, the rung the rule chooses: the cheapest regime-matched rung whose runs
    train within ``budget_s`` (``cost``); else None with the reason (the criteria each rung
    failed)."""
    out = {}
    for entry in dict.fromkeys(r["entry"] for r in records):
        rs = [r for r in records if r["entry"] == entry and "regime" in r]
        ok = [r for r in rs if r["regime"]["matched"] and cost(r) <= budget_s]
        if ok:
            best = min(ok, key=cost)
            out[entry] = {"rung": best["rung"], "why": "cheapest regime-matched rung within the budget"}
        else:
            failed = {r["rung"]: [k for k, v in r["regime"]["checks"].items() if v is not True]
                      + (["the budget"] if cost(r) > budget_s else []) for r in rs}
            out[entry] = {"rung": None, "why": "no rung is regime-matched within the budget: " + "; ".join(
                f"{k} fails {', '.join(v)}" for k, v in failed.items())}
    return out


def deciding(c: dict) -> dict | None:
    """The comparison that decides a claim's verdict, among those whose own verdict is the
    claim's: for holds the weakest (lowest lower bound), for refuted the strongest refutation
    (lowest upper bound), for not resolved the one furthest from holding relative to its own
    interval (lowest mean / half-width): a claim that needs every panel is shown by the panel
    that goes most the wrong way, not by a wide one whose mean points the claimed way."""
    effs = [e for e in c.get("effects") or [] if isinstance(e, dict)]  # one seed keeps raw effects: no interval
    same = [e for e in effs if e.get("verdict") == c.get("verdict")] or effs
    if not same:
        return None

    def key(e: dict) -> float:
        if math.isnan(e["low"]):
            return e["mean"]
        if c.get("verdict") == REFUTED:
            return e["high"]
        if c.get("verdict") == OPEN:
            half = e["high"] - e["mean"]
            return e["mean"] / half if half > 0 else math.copysign(math.inf, e["mean"])
        return e["low"]

    return min(same, key=key)


def effect_text(c: dict) -> str:
    """The deciding comparison's effect as ``mean [low, high]``."""
    e = deciding(c)
    return "" if e is None else f"{e['mean']:.4g} [{e['low']:.4g}, {e['high']:.4g}]"


def word(c: dict, matched: bool | None = True) -> str:
    """The verdict (``judging.verdict``) with its regime ("refuted at an unmatched regime"
    where ``matched`` is not True); a check without an interval says so."""
    if c.get("verdict") in (HOLDS, REFUTED, OPEN, SATURATED):
        return regime_word(c["verdict"], matched)
    if c.get("holds") is None:
        return "not checked"
    return "holds (no interval)" if c["holds"] else "does not hold (no interval)"
