"""The ladder's outputs from its records: ``LADDER.md`` (the rule's regime table and the
claims x rungs table with intervals and the three verdicts), ``ladder.csv`` (a row per rung,
entry and claim), ``ladder.json`` (every record and the rule's choice) and ``ladder.png/pdf``."""
from __future__ import annotations

import csv
import io
from pathlib import Path

from ..analysis.ladder import BUDGET_S, DEAD_MAX, OWN_ACC_MIN, PLATEAU_MAX, across_samples, choose, claims_of, \
    effect_text, rows, word


def _pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:.1f} %"


def _f(x, nd: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{nd}f}"


def _min(s):
    return None if s is None else s / 60


def regime_table(records: list[dict]) -> list[str]:
    out = ["| rung | entry | set | clients on own data (min over runs) | plateau: max over settings of the seed-mean "
           "change over the last 3 rounds (points) | FedAvg dead units (max share) | estimated time on 2 cores (min; the "
           "rule's cost) | measured training (s, summed over runs) | regime |", "|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        if "na" in r:
            out.append(f"| {r['rung']} | {r['entry']} | {' '.join(r['set']) or '(preset)'} | {r['na']} | | | | | |")
            continue
        g = r["regime"]
        ch = g["checks"]
        mark = lambda k: "" if ch.get(k) is None else (" ✓" if ch[k] else " ✗")  # noqa: E731
        out.append(f"| {r['rung']} | {r['entry']} | {' '.join(r['set']) or '(preset)'} | {_pct(g['own_acc_min'])}"
                   f"{mark('clients')} | {_f(g['plateau_max_points'])}{mark('plateau')} | "
                   f"{_pct(g['dead_share_max_fedavg'])}{mark('dead')} | {_f(_min(r.get('estimated_seconds')), 1)} | "
                   f"{_f(g['train_seconds_sum'], 0)} | "
                   f"{'matched' if g['matched'] else 'not matched'} |")
    return out


def claims_table(records: list[dict]) -> list[str]:
    out = ["| entry | claim | " + " | ".join(dict.fromkeys(r["rung"] for r in records)) + " |"]
    rungs = list(dict.fromkeys(r["rung"] for r in records))
    out.append("|---|---|" + "---|" * len(rungs))
    texts: dict = {}
    for r in records:
        for i, c in enumerate(claims_of(r)):
            texts.setdefault((r["entry"], i), c["text"])
    for (entry, i), text in texts.items():
        row = []
        for rung in rungs:
            rec = next((r for r in records if r["rung"] == rung and r["entry"] == entry), None)
            cl = claims_of(rec or {})
            if rec is None or "na" in rec or i >= len(cl):
                row.append("n/a")
                continue
            c = cl[i]
            need = f", ~{c['seeds_to_resolve']} seeds" if c.get("seeds_to_resolve") else ""
            row.append(f"**{word(c)}**{need}; {effect_text(c)}; {c.get('holds_in', '?')}/{c.get('seeds', '?')} seeds")
        out.append(f"| {entry} | {i + 1}. {text} | " + " | ".join(row) + " |")
    return out


def samples_table(both: list[dict]) -> list[str]:
    out = ["| rung | entry | claim | this sample | the other sample | verdict |", "|---|---|---|---|---|---|"]
    for c in both:
        v = c["verdict"] if c["agree"] else f"{c['verdict']} (the samples disagree)"
        out.append(f"| {c['rung']} | {c['entry']} | {c['claim']}. {c['text']} | {c['a']} | {c['b']} | **{v}** |")
    return out


def markdown(records: list[dict], title: str, other: list[dict] | None = None) -> str:
    chosen = choose(records)
    lines = [f"# {title}", "", f"The rule (docs/scale.md): clients >= {OWN_ACC_MIN:.0%} on their own data in every run, "
             f"seed-mean test accuracy changes < {PLATEAU_MAX:g} point over the last 3 rounds in every setting, "
             f"FedAvg runs < {DEAD_MAX:.0%} dead units; the cheapest such rung within {BUDGET_S / 60:.0f} minutes "
             "an entry on 2 cores.", "", "## Regime per rung", "", *regime_table(records), "",
             "## Chosen rung per entry (by the regime, not the verdicts)", ""]
    lines += [f"- {e}: **{c['rung'] or 'none'}** ({c['why']})" for e, c in chosen.items()]
    lines += ["", "## Claims x rungs", "", "Each cell: the three-valued verdict over seeds, the deciding effect as mean "
              "[95 % t interval] (paired by seed; > 0 is the claimed direction), seeds where it holds.", "",
              *claims_table(records), ""]
    if other:
        lines += ["## Two samples of the data", "", "A verdict that differs on the other sample (no image in common) is "
                  "not resolved at this scale at that rung.", "", *samples_table(across_samples(records, other)), ""]
    return "\n".join(lines)


def csv_text(records: list[dict]) -> str:
    rs = rows(records)
    buf = io.StringIO()
    if rs:
        w = csv.DictWriter(buf, fieldnames=list(rs[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rs)
    return buf.getvalue()


def figure(records: list[dict], title: str):
    from ..analysis.plots.ladder import draw

    rungs = list(dict.fromkeys(r["rung"] for r in records))
    columns, cells = [], {}
    for r in records:
        for i, c in enumerate(claims_of(r)):
            col = f"{r['entry']} {i + 1}"
            if col not in columns:
                columns.append(col)
            cells[(r["rung"], col)] = (word(c), effect_text(c).split(" [")[0])
    matched = {}
    for rung in rungs:
        got = [r["regime"]["matched"] for r in records if r["rung"] == rung and "regime" in r]
        matched[rung] = all(got) if got else None
    return draw(rungs, columns, cells, matched, title)


def write(out: Path, records: list[dict], title: str, other: list[dict] | None = None) -> list[Path]:
    from ..analysis.plots import save_figure
    from ..files import make_dirs, write_bytes, write_json

    make_dirs(out)
    write_bytes(out / "LADDER.md", markdown(records, title, other).encode())
    write_bytes(out / "ladder.csv", csv_text(records).encode())
    write_json(out / "ladder.json", {"title": title, "chosen": choose(records), "records": records,
                                     **({"across_samples": across_samples(records, other)} if other else {})})
    return [out / "LADDER.md", out / "ladder.csv", out / "ladder.json",
            *save_figure(figure(records, title), out, "ladder")]
