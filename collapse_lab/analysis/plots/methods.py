"""The methods entry drawn (effective rank against accuracy, one point per arm with its seeds'
95 % intervals, one panel per alpha) and written as a Markdown table per alpha."""
from __future__ import annotations

import dataclasses

from ..verdict import regime_word
from .style import figure, finish_entry

COLUMNS = (("er_global", "eff. rank global", "{:.2f}"), ("er_client0", "eff. rank client 0", "{:.2f}"),
           ("n_global", "rel. count global", "{:.1f}"), ("tail_global", "tail share global", "{:.4f}"),
           ("acc", "accuracy %", "{:.2f}"), ("dead_units", "dead units", "{:.1f}"))


ONE = "one seed: no test"


def _err(spread: dict) -> float:
    return 0.0 if spread["low"] is None else (spread["high"] - spread["low"]) / 2


def draw_methods(values: dict, entry):
    fig, axes = figure(max(1, len(values["panels"])), scale=1.6)
    for ax, panel in zip(axes, values["panels"]):
        points = [(panel["baseline"], panel["baseline_spread"], True)] if panel["baseline_spread"] else []
        points += [(r["arm"], r["spread"], False) for r in panel["arms"]]
        for name, sp, base in points:
            x, y = sp["er_global"], sp["acc"]
            ax.errorbar(x["mean"], y["mean"], xerr=_err(x), yerr=_err(y), fmt="s" if base else "o",
                        color="black" if base else "#3b6ea8", markersize=4 if base else 3, elinewidth=0.6, capsize=1.5)
            ax.annotate(name, (x["mean"], y["mean"]), xytext=(2, 2), textcoords="offset points", fontsize=5,
                        color="black" if base else "0.25")
        ax.set_xlabel("global effective rank (round's end)")
        ax.set_ylabel("global test accuracy (%)")
        n = len(panel["baseline_seeds"])
        ax.set_title(f"alpha = {panel['alpha']}: {len(panel['arms'])} arms against {panel['baseline']} (square), "
                     f"{n} seed{'s' if n != 1 else ''}", fontsize=7)
    missing = sorted({f"{m['arm']} ({m['why']})" for m in values["missing"]})
    left = sorted({f"{x['arm']} ({x['why']})" for p in values["panels"] for x in p["left_out"]})
    notes = ["points: the mean over seeds; bars: 95 % t interval over seeds"]
    notes += [f"not complete: {', '.join(missing)}"] if missing else []
    notes += [f"not judged: {', '.join(left)}"] if left else []
    entry = dataclasses.replace(entry, differs=[*entry.differs, *notes])
    return finish_entry(fig, entry, {"panels": []}, "")


def _cell(d: dict, fmt: str) -> str:
    if d["low"] is None:
        return ("{:+" + fmt[2:]).format(d["mean"])
    return ("{:+" + fmt[2:] + " [" + fmt + ", " + fmt + "]").format(d["mean"], d["low"], d["high"])


def table_md(values: dict, matched: bool | None = None) -> str:
    """Per alpha: FedAvg's means, then each arm's means, its differences from FedAvg with
    95 % intervals, and its two verdicts (with the regime word)."""
    out = []
    for panel in values["panels"]:
        base = panel["baseline_mean"] or {}
        out += [f"### alpha = {panel['alpha']}: each arm against {panel['baseline']} of the same seed "
                f"(seeds {', '.join(map(str, panel['baseline_seeds']))})", "",
                "| arm | " + " | ".join(h for _, h, _ in COLUMNS) + " | wider (global eff. rank) | more accurate |",
                "|---|" + "---:|" * len(COLUMNS) + "---|---|",
                f"| {panel['baseline']} (baseline) | " + " | ".join(f.format(base[k]) if k in base else "n/a"
                                                              for k, _, f in COLUMNS) + " | | |"]
        verdicts = {(c["arm"], c["measure"]): regime_word(c["verdict"], matched) for c in panel["claims"]}
        for r in panel["arms"]:
            cells = [f"{f.format(r['mean'][k])}<br>{_cell(r['diff'][k], f)}" for k, _, f in COLUMNS]
            out.append(f"| {r['arm']} | " + " | ".join(cells) + f" | {verdicts.get((r['arm'], 'er_global'), ONE)} | "
                       f"{verdicts.get((r['arm'], 'acc'), ONE)} |")
        link = panel.get("link")
        out += ["", "Each cell: the arm's mean over seeds, then its paired difference from the baseline with its 95 % "
                f"t interval. Verdicts: paired t, Holm's step-down over the {len(panel['claims'])} claims at "
                f"{values['level']} in each direction (docs/beyond/protocol.md)."]
        if link and link.get("rho") is not None:
            out.append(f"Exploratory: Spearman's rho between the arms' differences in global effective rank and in "
                       f"accuracy = {link['rho']:+.2f} over {link['arms']} arms (permutation p = {link['p']:.3g}).")
        for x in panel["left_out"]:
            out.append(f"- {x['arm']}: not judged ({x['why']})")
        out.append("")
    for m in values["missing"]:
        out.append(f"- {m['arm']}, seed {m['seed']}: not complete ({m['why']})")
    for name, why in sorted(values["not_arms"].items()):
        out.append(f"- {name}: not an arm ({why})")
    return "\n".join(out).rstrip() + "\n"
