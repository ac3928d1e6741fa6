"""Issue 50's finding, from `collapse-lab layers --json` outputs (docs/analyses.md, "Where
collapse starts"): per layer of one network, over 3 seeds (paired by seed),

- the collapse ratio erank(alpha 0.01) / erank(alpha inf) of the global model and client 0's
  local model at the last round, and the round from which the ratio's 95 % interval lies
  below 1 in every later round (where and when collapse starts; whether the local model
  leads the global one);
- what FedDecorr does there: erank(FedDecorr, alpha 0.01) - erank(FedAvg, alpha 0.01).

    python docs/layers_finding.py LAYERS.json [--json]
    python docs/layers_finding.py --logged RUN_FOLDER... [--json]   (train --probe-layers' events)

Runs are told apart by their reg and alpha; seeds by the run name's _s<k>_."""
from __future__ import annotations

import json
import math
import re
import sys

from collapse_lab.judging.seeds import t_interval


WIDTHS: dict[str, int] = {}


def load(path: str) -> dict:
    """(reg, alpha, seed, model, layer, round) -> effective rank."""
    out = {}
    for e in json.load(open(path))["layers"]:
        WIDTHS[e["layer"]] = e["width"]
        seed = int(re.search(r"_s(\d+)_", e["run"]).group(1))
        out[(e["reg"], str(e["alpha"]), seed, e["model"], e["layer"], e["round"])] = e["effective_rank"]
    return out


def load_logged(folders: list[str]) -> dict:
    """The same from the probe_layers events of ``train --probe-layers`` (the probe set)."""
    from collapse_lab.store import RunDir

    out = {}
    for f in folders:
        run = RunDir(f)
        seed = int(re.search(r"_s(\d+)_", run.path.name).group(1))
        for e in run.metrics():
            if e.get("event") == "probe_layers":
                for layer, v in e["layers"].items():
                    WIDTHS[layer] = v["width"]
                    out[(run.meta["reg"], str(run.meta["alpha"]), seed, e["model"], layer, e["round"])] = \
                        v["effective_rank"]
    return out


def series(d: dict, reg: str, alpha: str, model: str, layer: str, r: int) -> list[float]:
    return [d[k] for k in sorted(k for k in d if k[:2] == (reg, alpha) and k[3:] == (model, layer, r))]


def fmt(m, lo, hi, digits=2) -> str:
    return f"{m:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]" if not math.isnan(lo) else f"{m:.{digits}f}"


def summary(d: dict) -> dict:
    layers = list(dict.fromkeys(k[4] for k in d))
    last = max(k[5] for k in d)
    rounds = sorted({k[5] for k in d if k[5] >= 1})
    rows = []
    for layer in layers:
        row = {"layer": layer, "width": WIDTHS.get(layer)}
        for model in ("global", "client_0"):
            ratios = {r: [a / b for a, b in zip(series(d, "none", "0.01", model, layer, r),
                                                 series(d, "none", "inf", model, layer, r))] for r in rounds}
            row[f"{model}_ratio"] = t_interval(ratios[last])
            below = [len(ratios[r]) > 1 and t_interval(ratios[r])[2] < 1 for r in rounds]
            row[f"{model}_onset"] = next((r for i, r in enumerate(rounds) if all(below[i:])), None)
            row[f"{model}_erank_inf"] = t_interval(series(d, "none", "inf", model, layer, last))
        dec = [a - b for a, b in zip(series(d, "feddecorr", "0.01", "global", layer, last),
                                     series(d, "none", "0.01", "global", layer, last))]
        row["feddecorr_minus_fedavg"] = t_interval(dec) if dec else None
        rows.append(row)
    return {"last_round": last, "rows": rows}


def markdown(s: dict) -> str:
    head = ("| layer | erank, alpha inf (global) | ratio 0.01 / inf, global | below 1 from round | ratio, client 0 | "
            "below 1 from round | FedDecorr - FedAvg, alpha 0.01 (global) |")
    lines = [head, "|" + "---|" * 7]
    for r in s["rows"]:
        dec = fmt(*r["feddecorr_minus_fedavg"]) if r["feddecorr_minus_fedavg"] else "-"
        lines.append(f"| {r['layer']} ({r['width']}) | {fmt(*r['global_erank_inf'], 1)} | {fmt(*r['global_ratio'])} | "
                     f"{r['global_onset'] or '-'} | {fmt(*r['client_0_ratio'])} | {r['client_0_onset'] or '-'} | {dec} |")
    return "\n".join(lines)


def findings(d: dict) -> str:
    """The page's statements as paired comparisons over seeds (mean [95 % interval]):
    depth (each layer's collapse ratio minus the previous layer's, the same seed), the early
    rounds of z (erank at alpha 0.01 and inf, and their paired difference), and FedDecorr's
    effect on client 0's local model per layer."""
    layers = list(dict.fromkeys(k[4] for k in d))
    last = max(k[5] for k in d)

    def ratio(model, layer, r=last):
        return [a / b for a, b in zip(series(d, "none", "0.01", model, layer, r), series(d, "none", "inf", model, layer, r))]

    out = [f"Depth (round {last}; collapse ratio of a layer minus the previous layer's, paired by seed; < 0: "
           "deeper collapses more):", ""]
    for model in ("global", "client_0"):
        for a, b in zip(layers, layers[1:]):
            diff = [x - y for x, y in zip(ratio(model, b), ratio(model, a))]
            out.append(f"- {model}, {b} - {a}: {fmt(*t_interval(diff))}")
    z = layers[-1]
    out += ["", f"The early rounds of {z} (global model, effective rank; alpha 0.01 - inf paired by seed):", ""]
    for r in range(0, min(last, 3) + 1):
        lo, hi = series(d, "none", "0.01", "global", z, r), series(d, "none", "inf", "global", z, r)
        out.append(f"- round {r}: alpha 0.01 {fmt(*t_interval(lo), 1)}, inf {fmt(*t_interval(hi), 1)}, difference "
                   f"{fmt(*t_interval([x - y for x, y in zip(lo, hi)]), 1)}")
    if any(k[0] == "feddecorr" and k[3] == "client_0" for k in d):
        out += ["", f"FedDecorr - FedAvg at alpha 0.01, client 0's local model, round {last}:", ""]
        for layer in layers:
            dec = [a - b for a, b in zip(series(d, "feddecorr", "0.01", "client_0", layer, last),
                                         series(d, "none", "0.01", "client_0", layer, last))]
            out.append(f"- {layer}: {fmt(*t_interval(dec))}")
    return "\n".join(out)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a not in ("--json", "--findings")]
    d = load_logged(args[1:]) if args[0] == "--logged" else load(args[0])
    if "--findings" in sys.argv:
        print(findings(d))
    else:
        s = summary(d)
        print(json.dumps(s, indent=1) if "--json" in sys.argv else markdown(s))
