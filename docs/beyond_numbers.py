"""Every number docs/beyond.md quotes, printed from the committed evidence of the lab-methods
entry (docs/beyond/records/runs/): ``python docs/beyond_numbers.py`` prints the findings block;
``--check`` says whether the page's block (between ``<!-- numbers:findings -->`` and
``<!-- /numbers -->``) equals it; ``--write`` rewrites it. Before all 60 runs are in (or the
ladder's record lists the rest as not complete), the block says how many are in and computes
nothing (docs/beyond/protocol.md §5).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "beyond"
PAGE = HERE / "beyond.md"
RUNG = "n300-e10-bn-lr0.01-s3-r30"
RUNS = 60
START, END = "<!-- numbers:findings -->\n", "<!-- /numbers -->"


def evidence() -> list[dict]:
    files = sorted((OUT / "records" / "runs").glob("*-r30.json"))
    return [json.loads(p.read_text())["measures"] for p in files]


def _ladder_record() -> dict | None:
    p = OUT / "records" / f"{RUNG}--lab-methods.json"
    return json.loads(p.read_text()) if p.is_file() else None


def findings() -> str:
    """The findings block: each arm's effect on global effective rank and on accuracy with
    its 95 % interval and verdict, the exploratory link, and every arm not judged."""
    from collapse_lab.judging.arms import methods_values
    from collapse_lab.analysis.catalogue import pick
    from collapse_lab.judging.ladder import summary

    rows = evidence()
    record = _ladder_record()
    if len(rows) < RUNS and record is None:
        # said without the count, so the page stays equal to the script while the runs come in
        return (f"Not computed yet: the protocol computes nothing before all {RUNS} runs are in (docs/beyond/protocol.md "
                "§5); the files in docs/beyond/records/runs/ count them.\n")
    entry = pick(["lab-methods"], "figure")[0].at("cpu")
    values = methods_values(entry.params, rows)
    regime = summary(rows)
    matched = regime["matched"]
    from collapse_lab.judging.verdict import regime_word

    lines = [f"{len(rows)} of {RUNS} runs; regime {'matched' if matched else 'not matched'} by docs/scale.md's rule: "
             + _regime_text(regime) + ".", ""]
    for panel in values["panels"]:
        base = panel["baseline_mean"]
        lines += [f"alpha = {panel['alpha']}, against {panel['baseline']} (global effective rank "
                  f"{base['er_global']:.2f}, accuracy {base['acc']:.2f} %, seeds "
                  f"{', '.join(map(str, panel['baseline_seeds']))}):", "",
                  "| arm | global eff. rank minus FedAvg's [95 %] | verdict (wider) | accuracy minus FedAvg's, "
                  "points [95 %] | verdict (more accurate) |", "|---|---|---|---|---|"]
        verdict = {(c["arm"], c["measure"]): regime_word(c["verdict"], matched) for c in panel["claims"]}
        for r in sorted(panel["arms"], key=lambda r: -r["diff"]["er_global"]["mean"]):
            e, a = r["diff"]["er_global"], r["diff"]["acc"]
            lines.append(f"| {r['arm']} | {e['mean']:+.2f} [{e['low']:.2f}, {e['high']:.2f}] | "
                         f"{verdict[(r['arm'], 'er_global')]} | {a['mean']:+.2f} [{a['low']:.2f}, {a['high']:.2f}] | "
                         f"{verdict[(r['arm'], 'acc')]} |")
        best = min(panel["claims"], key=lambda c: min(c["p_plus"], c["p_minus"]))
        way = "p+" if best["p_plus"] <= best["p_minus"] else "p-"
        lines += ["", f"The smallest one-sided p of the {len(panel['claims'])} claims: {best['arm']}, "
                      f"{'global effective rank' if best['measure'] == 'er_global' else 'accuracy'}, {way} = "
                      f"{min(best['p_plus'], best['p_minus']):.3g} ({way} after Holm: "
                      f"{best['p_plus_holm'] if way == 'p+' else best['p_minus_holm']:.3g}; it must be below 0.025)."]
        link = panel["link"]
        if link and link["rho"] is not None:
            lines += ["", f"Exploratory: Spearman's rho over the {link['arms']} arms between the difference in global "
                          f"effective rank and in accuracy = {link['rho']:+.2f} (permutation p = {link['p']:.3g})."]
        lines += [f"- {x['arm']}: not judged ({x['why']})" for x in panel["left_out"]]
    lines += [f"- {name}: not an arm ({why})" for name, why in sorted(values["not_arms"].items())]
    return "\n".join(lines) + "\n"


def _regime_text(r: dict) -> str:
    """The regime rule's three criteria with their deciding numbers (docs/scale.md)."""
    from collapse_lab.judging.ladder import DEAD_MAX, OWN_ACC_MIN

    slope = r.get("plateau_slope") or {}
    parts = [f"clients' own-data accuracy {100 * r['own_acc_min']:.1f} % at the least (the rule asks "
             f">= {100 * OWN_ACC_MIN:.0f} %)" if r["own_acc_min"] is not None else "clients' own-data accuracy not measured",
             f"plateau (slope rule) in {slope['settings_plateaued']} of {slope['settings']} settings" if slope
             else "plateau not measured",
             f"FedAvg's dead units {100 * r['dead_share_max_fedavg']:.1f} % at the most (the rule asks "
             f"< {100 * DEAD_MAX:.0f} %)" if r["dead_share_max_fedavg"] is not None else "dead units not measured"]
    return "; ".join(parts)


def page_block(text: str) -> str | None:
    i = text.find(START)
    j = text.find(END, i + len(START)) if i >= 0 else -1
    return None if i < 0 or j < 0 else text[i + len(START):j]


def main(argv: list[str]) -> int:
    block = findings()
    text = PAGE.read_text()
    if "--check" in argv:
        ok = page_block(text) == block
        print("findings: " + ("equal" if ok else "DIFFERS from the evidence"))
        return 0 if ok else 1
    if "--write" in argv:
        from collapse_lab.files import write_bytes

        i = text.index(START) + len(START)
        write_bytes(PAGE, (text[:i] + block + text[text.index(END, i):]).encode())  # atomic, as scale_numbers
        print(f"wrote {PAGE}")
        return 0
    sys.stdout.write(block)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (OSError, ValueError, KeyError) as e:
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(2)
