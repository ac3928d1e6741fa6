"""The ladder's outputs from its records: ``LADDER.md`` (the rule's regime table and the
claims x rungs table with intervals and the three verdicts), ``ladder.csv`` (a row per rung,
entry and claim), ``ladder.json`` (every record and the rule's choice) and ``ladder.png/pdf``."""
from __future__ import annotations

import csv
import io
from pathlib import Path

from ..analysis.ladder import across_samples, claims_of, rows
from ..judging.ladder import BUDGET_S, DEAD_MAX, OWN_ACC_MIN, PLATEAU_MAX, choose, effect_text, word
from ..judging.plateau import SLOPE_MAX, UPPER_MAX


def _pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:.1f} %"


def _f(x, nd: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{nd}f}"


def _min(s):
    return None if s is None else s / 60


def _set(r: dict) -> str:
    seeds = r.get("seeds")
    return (" ".join(r["set"]) or "(preset)") + (f" seeds {seeds[0]}-{seeds[-1]}" if seeds else "")


def regime_table(records: list[dict]) -> list[str]:
    out = ["| rung | entry | set | clients on own data (min over runs) | plateau, slope rule: the setting furthest "
           "from flat, seed-mean slope [one-sided 95 % upper bound] (points a round, last W rounds) | plateau, old rule: "
           "max over settings of the seed-mean change over the last 3 rounds (points) | FedAvg dead units (max share) | "
           "estimated time on 2 cores (min; the rule's cost) | measured training (s, summed over runs) | regime |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        if "na" in r:
            out.append(f"| {r['rung']} | {r['entry']} | {' '.join(r['set']) or '(preset)'} | {r['na']} | | | | | | |")
            continue
        g = r["regime"]
        ch = g["checks"]
        mark = lambda k: "" if ch.get(k) is None else (" ✓" if ch[k] else " ✗")  # noqa: E731
        sl = g.get("plateau_slope")
        slope = ("no curves kept (format 1): the old rule decides" if sl is None else
                 f"{sl['slope_mean_worst']:+.2f} [{sl['slope_upper_worst']:.2f}], W {sl['window']}, "
                 f"{sl['settings_plateaued']} of {sl['settings']} settings flat{mark('plateau')}")
        old = "" if sl is None else (" ✓" if g.get("plateau_old_rule") else " ✗")
        out.append(f"| {r['rung']} | {r['entry']} | {_set(r)} | {_pct(g['own_acc_min'])}"
                   f"{mark('clients')} | {slope} | {_f(g['plateau_max_points'])}{old if sl else mark('plateau')} | "
                   f"{_pct(g['dead_share_max_fedavg'])}{mark('dead')} | {_f(_min(r.get('estimated_seconds')), 1)} | "
                   f"{_f(g['train_seconds_sum'], 0)} | "
                   f"{'matched' if g['matched'] else 'not matched'} |")
    return out


def claim_columns(records: list[dict]) -> dict[tuple[str, str], int]:
    """Each (entry, claim text) of the records, numbered per entry in order of first
    appearance: a record that keeps the evidence has more claims than an older one, so a
    claim is told by its text, not its place in a record."""
    out: dict[tuple[str, str], int] = {}
    for r in records:
        for c in claims_of(r):
            key = (r["entry"], c["text"])
            if key not in out:
                out[key] = 1 + sum(1 for e, _ in out if e == r["entry"])
    entries = list(dict.fromkeys(e for e, _ in out))
    return dict(sorted(out.items(), key=lambda kv: (entries.index(kv[0][0]), kv[1])))


def claims_table(records: list[dict]) -> list[str]:
    rungs = list(dict.fromkeys(r["rung"] for r in records))
    out = ["| entry | claim | " + " | ".join(rungs) + " |", "|---|---|" + "---|" * len(rungs)]
    cells: dict = {}
    forms: dict = {}
    for r in records:
        for c in claims_of(r):
            cells[(r["rung"], r["entry"], c["text"])] = (r, c)
            if c.get("form"):
                forms.setdefault((r["entry"], c["text"]), c["form"])
    for (entry, text), i in claim_columns(records).items():
        row = []
        for rung in rungs:
            if (rung, entry, text) not in cells:
                row.append("n/a")
                continue
            rec, c = cells[(rung, entry, text)]
            need = f", ~{c['seeds_to_resolve']} seeds" if c.get("seeds_to_resolve") else ""
            way = c.get("claimed_way_in", c.get("holds_in", "?"))
            row.append(f"**{word(c, rec['regime'].get('matched'))}**{need}; {effect_text(c)}; the claimed way in "
                       f"{way}/{c.get('seeds', '?')} seeds" + (" (kept verdict)" if c.get("legacy") else ""))
        form = forms.get((entry, text))
        out.append(f"| {entry} | {i}. {text}{f' ({form})' if form else ''} | " + " | ".join(row) + " |")
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
             f"the global model plateaued in every setting (the slope rule of 2026-11-28: |seed-mean slope| < "
             f"{SLOPE_MAX:g} point a round over the last W = max(5, R/3) rounds, one-sided 95 % upper bound < "
             f"{UPPER_MAX:g}; records without curves: the old rule, change < {PLATEAU_MAX:g} point over the last 3 "
             f"rounds), FedAvg runs < {DEAD_MAX:.0%} dead units; the cheapest such rung within {BUDGET_S / 60:.0f} "
             "minutes an entry on 2 cores.", "", "## Regime per rung", "", *regime_table(records), "",
             "## Chosen rung per entry (by the regime, not the verdicts)", ""]
    lines += [f"- {e}: **{c['rung'] or 'none'}** ({c['why']})" for e, c in chosen.items()]
    lines += ["", "## Claims x rungs", "", "Each cell: the verdict over seeds (holds, refuted, not resolved at this "
              "scale, uninformative where the measure is saturated; \"at an unmatched regime\" where the rung is not "
              "regime-matched), the deciding comparison as mean [95 % t interval] (paired by seed within an alpha, "
              "Welch across alphas; > 0 is the claimed direction), and the seeds in which the claim points the claimed "
              "way (a direction count). A claim over several comparisons holds when every one does (intersection-"
              "union) and is refuted when one is after Holm's correction. \"(kept verdict)\": a record without "
              "evidence, its verdict as computed then (paired, no correction).", "", *claims_table(records), ""]
    sens = sensitivity_lines(records)
    if sens:
        lines += ["## Sensitivity of the scale-free count", "", "Seed-mean count of sigma_k / sigma_1 above 10^-1, "
                  "10^-2 (the claimed form) and 10^-3 among the top 100, per rung, panel and setting (records with "
                  "evidence).", "", *sens, ""]
    if other:
        lines += ["## Two samples of the data", "", "A verdict that differs on the other sample (no image in common) is "
                  "not resolved at this scale at that rung.", "", *samples_table(across_samples(records, other)), ""]
    return "\n".join(lines)


def sensitivity_lines(records: list[dict]) -> list[str]:
    from ..analysis.catalogue import pick
    from ..analysis.evidence import SENSITIVITY, sensitivity
    from ..judging.ladder import has_evidence

    out = []
    for r in records:
        if "claims" not in r or not has_evidence(r):
            continue
        if not out:
            out += ["| rung | entry | panel | setting | " + " | ".join(f"> {x:g}" for x in SENSITIVITY) + " |",
                    "|---|---|---|---|" + "---|" * len(SENSITIVITY)]
        params = pick([r["entry"]], "figure")[0].at(r["preset"]).params
        for row in sensitivity(params, r["regime"]["runs"]):
            out.append(f"| {r['rung']} | {r['entry']} | {row['panel']} | {row['series']} | "
                       + " | ".join(f"{v:.1f}" for v in row["n_relative_top"].values()) + " |")
    return out


def csv_text(records: list[dict]) -> str:
    rs = rows(records)
    buf = io.StringIO()
    if rs:
        w = csv.DictWriter(buf, fieldnames=list(rs[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rs)
    return buf.getvalue()


def figure(records: list[dict], title: str):
    """Rungs with a record (rows) x claims (columns, numbered as LADDER.md's claims table
    numbers them); rungs not run on this sample are left out and counted in the title."""
    from ..analysis.plots.ladder import draw

    every = list(dict.fromkeys(r["rung"] for r in records))
    rungs = [g for g in every if any("claims" in r for r in records if r["rung"] == g)]
    if len(rungs) < len(every):
        title += f"\n{len(every) - len(rungs)} rung(s) without a record on this sample left out (LADDER.md lists them)"
    numbers = claim_columns(records)
    columns = [f"{e.replace('feddecorr-', '')} claim {i}" for (e, _), i in numbers.items()]
    cells = {}
    for r in records:
        for c in claims_of(r):
            col = f"{r['entry'].replace('feddecorr-', '')} claim {numbers[(r['entry'], c['text'])]}"
            cells[(r["rung"], col)] = (c.get("verdict") or word(c), effect_text(c).split(" [")[0])
    matched = {}
    for rung in rungs:
        got = [r["regime"]["matched"] for r in records if r["rung"] == rung and "regime" in r]
        matched[rung] = all(got) if got else None
    return draw(rungs, columns, cells, matched, title)


def regenerate(out: Path, source: Path, other: list[dict] | None = None) -> list[Path]:
    """The outputs of the ladder kept in ``source`` (its ``ladder.json``: title and records)
    written again into ``out``: the files are a function of the records alone (``other``:
    the other sample's records, as ``--other-sample`` read them)."""
    import json

    d = json.loads((Path(source) / "ladder.json").read_text())
    return write(Path(out), d["records"], d["title"], other)


def write(out: Path, records: list[dict], title: str, other: list[dict] | None = None) -> list[Path]:
    from ..analysis.plots import save_figure
    from ..files import make_dirs, write_bytes, write_json

    here = {(r["rung"], r["entry"]) for r in records if "na" not in r}
    other = [r for r in other or () if (r["rung"], r["entry"]) in here] or None  # compared where both have one
    make_dirs(out)
    write_bytes(out / "LADDER.md", markdown(records, title, other).encode())
    write_bytes(out / "ladder.csv", csv_text(records).encode())
    write_json(out / "ladder.json", {"title": title, "chosen": choose(records), "records": records,
                                     **({"other_sample": [{"rung": r["rung"], "entry": r["entry"]} for r in other]}
                                        if other else {}),
                                     **({"across_samples": across_samples(records, other)} if other else {})})
    return [out / "LADDER.md", out / "ladder.csv", out / "ladder.json",
            *save_figure(figure(records, title), out, "ladder")]
