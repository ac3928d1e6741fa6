"""The methods entry drawn (effective rank against accuracy, one point per arm with its seeds'
95 % intervals, one panel per alpha) and written as a Markdown table per alpha."""
from __future__ import annotations

import dataclasses

from ...judging.verdict import regime_word
from .style import finish_entry

COLUMNS = (("er_global", "eff. rank global", "{:.2f}"), ("er_client0", "eff. rank client 0", "{:.2f}"),
           ("n_global", "rel. count global", "{:.1f}"), ("tail_global", "tail share global", "{:.4f}"),
           ("acc", "accuracy %", "{:.2f}"), ("dead_units", "dead units", "{:.1f}"))


ONE = "one seed: no test"


def _err(spread: dict) -> float:
    return 0.0 if spread["low"] is None else (spread["high"] - spread["low"]) / 2


def numbers(panel: dict) -> dict[str, int]:
    """Each arm's number in both panels: 1 for the largest paired difference in global
    effective rank (the top row of panel b), so that twenty names need not crowd panel a."""
    rows = sorted(panel["arms"], key=lambda r: -r["diff"]["er_global"]["mean"])
    return {r["arm"]: i + 1 for i, r in enumerate(rows)}


def _scatter(ax, panel: dict) -> None:
    """Effective rank against accuracy, one point per arm (the baseline a square), each named
    by its number in panel b; the seeds' intervals drawn light, so that the means stay legible."""
    number = numbers(panel)
    points = [(panel["baseline"], panel["baseline_spread"], True)] if panel["baseline_spread"] else []
    points += [(r["arm"], r["spread"], False) for r in panel["arms"]]
    for name, sp, base in points:
        x, y = sp["er_global"], sp["acc"]
        color = "black" if base else "#3b6ea8"
        ax.errorbar(x["mean"], y["mean"], xerr=_err(x), yerr=_err(y), fmt="none", ecolor=color, elinewidth=0.5,
                    capsize=1.2, alpha=0.5 if base else 0.25)
        ax.plot(x["mean"], y["mean"], "s" if base else "o", color=color, markersize=4 if base else 3, zorder=3)
        ax.annotate(name if base else str(number[name]), (x["mean"], y["mean"]), xytext=(2.5, -8 if base else 2.5),
                    textcoords="offset points", fontsize=6.5, color=color, zorder=4)
    for axis, key in ((ax.set_xlim, "er_global"), (ax.set_ylim, "acc")):  # the means fill the panel; bars run on
        means = [sp[key]["mean"] for _, sp, _ in points]
        pad = 0.08 * (max(means) - min(means) or 1.0)
        axis(min(means) - pad, max(means) + 2 * pad)
    ax.set_xlabel("global effective rank")
    ax.set_ylabel("global test accuracy (%)")
    n = len(panel["baseline_seeds"])
    ax.set_title(f"(a) alpha = {panel['alpha']}, {n} seed{'s' if n != 1 else ''}: arms numbered as in (b),\n"
                 f"{panel['baseline']} the square; bars cut at the frame", fontsize=8)


def _forest(ax, panel: dict) -> None:
    """Each arm's paired difference in global effective rank from the baseline, with its
    95 % interval, sorted; filled where the family's verdict says wider or narrower."""
    number = numbers(panel)
    rows = sorted(panel["arms"], key=lambda r: -number[r["arm"]])  # number 1 at the top
    verdict = {c["arm"]: c["verdict"] for c in panel["claims"] if c["measure"] == "er_global"}
    for i, r in enumerate(rows):
        d = r["diff"]["er_global"]
        decided = verdict.get(r["arm"]) in ("holds", "refuted")
        ax.errorbar(d["mean"], i, xerr=None if d["low"] is None else [[d["mean"] - d["low"]], [d["high"] - d["mean"]]],
                    fmt="o", color="#3b6ea8", markerfacecolor="#3b6ea8" if decided else "white", markersize=3.5,
                    elinewidth=0.8, capsize=1.5)
    ax.axvline(0.0, color="0.4", linewidth=0.7)
    ax.set_yticks(range(len(rows)), [f"{r['arm'].replace('fedavg+', 'fedavg + ')}  {number[r['arm']]:>2}" for r in rows],
                  fontsize=7)
    ax.set_xlabel(f"global effective rank minus {panel['baseline']}'s (same seed)")
    ax.set_title("(b) paired difference, 95 % t interval\n(filled: the family's verdict decides)", fontsize=8)


def draw_methods(values: dict, entry):
    import matplotlib.pyplot as plt

    from .style import use

    use()
    n = max(1, len(values["panels"]))
    fig, axes = plt.subplots(n, 2, figsize=(7.0, 3.6 * n), squeeze=False, gridspec_kw={"width_ratios": [1.15, 1]})
    for (a, b), panel in zip(axes, values["panels"]):
        _scatter(a, panel)
        _forest(b, panel)
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
            out.append(f"| {r['arm']}" + (f" (equal to {panel['baseline']} in every seed)" if r["identical"] else "") + " | "
                       + " | ".join(cells) + f" | {verdicts.get((r['arm'], 'er_global'), ONE)} | "
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
