"""The confirmatory family of docs/scale/protocol-confirmatory.md, computed from a ladder's
kept run evidence (``OUT/records/runs/*.json``) of the rung ``n300-e10-bn-lr0.01-s6-r30``:
the 15 claims, their tests (``ordered``), Holm's step-down at 0.025 in each direction, the
regime word, and the correlation of per-seed deviations between two samples.

The same function serves the confirmation (sample c) and the exploratory reading of samples
a and b; only the label differs. It refuses to compute anything before all runs are in.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

from ..errors import CollapseLabError
from ..spectra.functional import effective_rank, local_global_gap, n_relative, tail_share
from . import ordered
from .verdict import HOLDS, OPEN, REFUTED, SATURATED, regime_word

RUNG = "n300-e10-bn-lr0.01-s6-r30"
ALPHAS = ("0.01", "0.05", "0.25", "inf")  # rising alpha: the claimed rise of the Fig. 2 measures
LEVEL = 0.025  # each direction, Holm over the family: 0.05 family-wise for both together
RUNS = 36
R_MARGIN = 0.1  # |R(inf)| "small": log10 units, the protocol's choice


def measures(m: dict) -> dict:
    """The protocol's measures of one run's evidence (its ``measures``), float64."""
    sv = {w: torch.tensor(m[f"spectrum_{w}"], dtype=torch.float64) for w in ("global", "client0")}
    out = {"acc": 100.0 * float(m["test_acc"])}
    for w, s in sv.items():
        out[f"er_{w}"] = effective_rank(s, m[f"floor_{w}"])
        out[f"n_{w}"] = float(n_relative(s, 0.01))
        out[f"tail_{w}"] = tail_share(s, 100)
    out["R"] = local_global_gap(sv["client0"], sv["global"], m["floor_client0"], m["floor_global"],
                                top=len(sv["global"]))[0]
    return out


def load(folder: Path, rung_runs: list[str] | None = None) -> dict:
    """The runs' measures by (alpha, reg) and seed, from ``folder/records/runs``; refused
    with fewer than the rung's 36 runs (no verdict before all runs are in)."""
    files = sorted((Path(folder) / "records" / "runs").glob("*-r30.json"))
    runs = [json.loads(p.read_text()) for p in files]
    runs = [r for r in runs if rung_runs is None or r["run"] in rung_runs]
    if len(runs) < RUNS:
        raise CollapseLabError(f"{folder}: {len(runs)} of the rung's {RUNS} runs have evidence; the protocol "
                               "computes no verdict before all are in (train the rest first)")
    table: dict = {}
    for r in runs:
        m = r["measures"]
        table.setdefault((m["alpha"], m["reg"]), {})[int(m["seed"])] = measures(m)
    return table


def _values(table, alpha: str, reg: str, key: str) -> list[float]:
    cell = table[(alpha, reg)]
    return [cell[s][key] for s in sorted(cell)]


def _pairs(table, alpha: str, key: str, sign: float = 1.0) -> list[float]:
    a, b = table[(alpha, "feddecorr")], table[(alpha, "none")]
    return [sign * (a[s][key] - b[s][key]) for s in sorted(a)]


def _claims(t) -> list[dict]:
    """The 15 claims of the protocol's table, in its order, each with its test's numbers."""
    v = lambda a, k: _values(t, a, "none", k)  # noqa: E731
    rows = []
    for w, who in (("global", "the global model"), ("client0", "client 0")):
        rows.append(("F2-JT-er-" + w[0], f"Fig. 2: {who}'s effective rank falls as alpha falls", "ordering",
                     "Jonckheere-Terpstra", [f"er_{w}"], ordered.jonckheere([v(a, f"er_{w}") for a in ALPHAS])))
    for w, who in (("global", "the global model"), ("client0", "client 0")):
        rows.append(("F2-JT-n-" + w[0], f"Fig. 2: {who}'s relative count (all 256) falls as alpha falls", "ordering",
                     "Jonckheere-Terpstra", [f"n_{w}"], ordered.jonckheere([v(a, f"n_{w}") for a in ALPHAS])))
    for w, who in (("global", "the global model"), ("client0", "client 0")):
        rows.append(("F2-end-er-" + w[0], f"Fig. 2: {who}'s effective rank at alpha inf > at 0.01", "endpoint contrast",
                     "Welch t", [f"er_{w}"], ordered.welch(v("inf", f"er_{w}"), v("0.01", f"er_{w}"))))
    for w, who in (("global", "the global model"), ("client0", "client 0")):
        steps = [ordered.welch(v(hi, f"er_{w}"), v(lo, f"er_{w}")) for lo, hi in zip(ALPHAS, ALPHAS[1:])]
        rows.append(("F2-strict-er-" + w[0], f"Fig. 2: {who}'s effective rank falls at each of the three steps",
                     "strict four-step", "intersection-union of three Welch t", [f"er_{w}"],
                     ordered.intersection_union(steps)))
    for key, what in (("er", "effective rank"), ("tail", "tail share"), ("n", "uncapped relative count")):
        panels = [ordered.paired(_pairs(t, a, f"{key}_{w}")) for a in ("0.01", "0.05") for w in ("client0", "global")]
        rows.append((f"F3-{key}", f"Fig. 3: {what} larger with FedDecorr in every panel", "every panel",
                     "intersection-union of four paired t", [f"{key}_client0", f"{key}_global"],
                     ordered.intersection_union(panels)))
    rows.append(("T1-0.05", "Table 1: FedDecorr's accuracy > FedAvg's at alpha 0.05", "one comparison", "paired t",
                 ["acc"], ordered.paired(_pairs(t, "0.05", "acc"))))
    rows.append(("J4-order", "journal Fig. 4: R grows as alpha falls (FedAvg)", "ordering", "Jonckheere-Terpstra",
                 ["R"], ordered.jonckheere([v(a, "R") for a in reversed(ALPHAS)])))
    rows.append(("J4-iid", f"journal Fig. 4: |R(inf)| < {R_MARGIN} (log10)", "equivalence", "two one-sided t (TOST)",
                 ["R"], ordered.tost(v("inf", "R"), R_MARGIN)))
    rows.append(("J6", "journal Fig. 6: FedDecorr lowers R at alpha 0.01 and at 0.05", "both alphas",
                 "intersection-union of two paired t", ["R"],
                 ordered.intersection_union([ordered.paired(_pairs(t, a, "R", -1.0)) for a in ("0.01", "0.05")])))
    return [{"id": i, "claim": c, "form": f, "test": te, "measures": ms, **r} for i, c, f, te, ms, r in rows]


def _saturated(t, claim: dict) -> bool:
    """Every run the claim reads has one value of its measure(s): no test can see anything."""
    vals = {round(cell[s][k], 12) for (_, _), cell in t.items() for s in cell for k in claim["measures"]}
    return len(vals) == 1


def family(folder: Path, regime: dict[str, bool | None], label: str) -> dict:
    """The protocol's verdicts on the evidence in ``folder`` (``regime``: matched per entry,
    ``feddecorr-fig2`` and ``feddecorr-fig3``, from the rung's records)."""
    t = load(folder)
    rows = _claims(t)
    plus = ordered.holm_adjusted([r["p_plus"] for r in rows])
    minus = ordered.holm_adjusted([r["p_minus"] for r in rows])
    for r, pp, pm in zip(rows, plus, minus):
        entry = "feddecorr-fig2" if r["id"].startswith(("F2", "J4")) else "feddecorr-fig3"
        word = (SATURATED if _saturated(t, r) else HOLDS if pp <= LEVEL else REFUTED if pm <= LEVEL else OPEN)
        r.update(p_plus_holm=pp, p_minus_holm=pm, verdict=word, matched=regime.get(entry),
                 word=regime_word(word, regime.get(entry)))
    return {"label": label, "rung": RUNG, "level": LEVEL, "family": len(rows), "claims": rows}


def deviations(folder: Path, key: str) -> dict[tuple, list[float]]:
    """Each run's value of ``key`` minus its setting's mean over seeds, per (alpha, reg) in
    seed order (the i-th seed of one sample pairs with the i-th of another)."""
    t = load(folder)
    out = {}
    for setting, cell in t.items():
        xs = np.array([cell[s][key] for s in sorted(cell)])
        out[setting] = list(xs - xs.mean())
    return out


def deviation_correlation(one: Path, other: Path, key: str) -> float:
    """Pearson's r of per-seed deviations between two samples' runs of the rung, paired by
    setting and seed rank: about 1 when the samples repeat the seeds' draws, about 0 when the
    draws are new."""
    a, b = deviations(one, key), deviations(other, key)
    x = [v for s in sorted(a) for v in a[s]]
    y = [v for s in sorted(a) for v in b[s]]
    return float(np.corrcoef(x, y)[0, 1])
