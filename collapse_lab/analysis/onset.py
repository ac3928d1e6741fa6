"""Where and when collapse starts (``collapse-lab layers``): for each layer, the first round
from which its global model's effective rank stays below half the IID run's of the same
settings (log2 ratio < -1 at that round and every later one drawn). Measured against IID,
not against the layer's own first round: every layer drops from its random initialisation in
round 1, at any alpha, and that drop is training, not collapse."""
from __future__ import annotations

import math
from collections import defaultdict

THRESHOLD = -1.0  # log2 ratio to the IID run: half its effective rank


def _group(e: dict) -> str:
    return e.get("group") or e["run"]


def mean_cells(rows: list[dict], measure: str = "effective_rank") -> dict[tuple, float]:
    """(group, model, layer, round) -> the measure's mean over the group's seeds."""
    cells = defaultdict(list)
    for e in rows:
        cells[(_group(e), e["model"], e["layer"], e["round"])].append(float(e[measure]))
    return {k: sum(v) / len(v) for k, v in cells.items()}


def ratios(cells: dict[tuple, float], group: str, iid: str, model: str) -> dict[tuple, float]:
    """(layer, round) -> log2(group's value / the IID group's), where both are positive."""
    out = {}
    for (g, m, layer, r), v in cells.items():
        ref = cells.get((iid, m, layer, r))
        if g == group and m == model and ref is not None and v > 0 and ref > 0:
            out[(layer, r)] = math.log2(v / ref)
    return out


def onsets(ratio: dict[tuple, float], threshold: float = THRESHOLD) -> dict[str, int]:
    """layer -> the first round from which its ratio stays below ``threshold`` (layers that
    never stay below are left out)."""
    out = {}
    for layer in dict.fromkeys(layer for layer, _ in ratio):
        rounds = sorted(r for lay, r in ratio if lay == layer)
        start = None
        for r in rounds:
            if ratio[(layer, r)] < threshold:
                start = r if start is None else start
            else:
                start = None
        if start is not None:
            out[layer] = start
    return out


def summary(rows: list[dict], reference: dict[str, str], model: str = "global") -> list[dict]:
    """Per group with an IID reference: each layer's onset, its ratio there and at the last
    round, and the layer where collapse starts first (the input side first on a tie)."""
    cells = mean_cells(rows)
    out = []
    for g, iid in reference.items():
        ratio = ratios(cells, g, iid, model)
        found = onsets(ratio)
        layers = {}
        for layer, r in found.items():
            last = max(q for lay, q in ratio if lay == layer)
            layers[layer] = {"round": r, "ratio": ratio[(layer, r)], "last_round": last, "last_ratio": ratio[(layer, last)]}
        first = min(layers, key=lambda k: layers[k]["round"]) if layers else None
        out.append({"group": g, "iid": iid, "model": model, "threshold": THRESHOLD, "onsets": layers, "first": first})
    return out


def line(s: dict) -> str:
    """One sentence per group: 'alpha = 0.01: collapse starts in z at round 3 (log2 ratio to IID
    -2.23; -3.42 at round 9); features.4 at round 4'."""
    if s["first"] is None:
        return (f"{s['group']}: no layer of the {s['model']} model stays below half the IID run's effective rank "
                f"(log2 ratio < {s['threshold']:g}) through the last round drawn")
    o = s["onsets"][s["first"]]
    rest = sorted((v["round"], k) for k, v in s["onsets"].items() if k != s["first"])
    return (f"{s['group']}: collapse starts in {s['first']} at round {o['round']} (log2 ratio of the {s['model']} "
            f"model's effective rank to IID {o['ratio']:+.2f}, below {s['threshold']:g} from then on; "
            f"{o['last_ratio']:+.2f} at round {o['last_round']})"
            + ("; then " + ", ".join(f"{k} at round {r}" for r, k in rest) if rest else ""))
