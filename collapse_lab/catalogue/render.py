"""Rendering the catalogue's entries: a figure (its values, drawing, JSON and claims over
seeds) or a table (md, csv, tex, json beside the papers' numbers), each as a record; an
entry that cannot render says why in its record. ``say`` is where progress lines go."""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from ..judging.claims import evaluate_safely
from ..errors import CollapseLabError
from .overrides import describe
from .planning import lacking_data

STAND_IN = ("(the quick preset is a stand-in at a toy scale, an unmatched regime: these words check the code path, "
            "they are not a test of the paper; --preset cpu on real data, or a ladder, tests it)")
SMOKE_NOTE = "SMOKE: one round, one local step per client, a small test set: proves the path, not the papers' numbers"


def verdict_counts(claims: list[dict]) -> str:
    """``1 holds, 1 refuted, 1 not resolved at this scale, 1 not checked``: each claim counted
    once, by its one verdict (``judging.verdict``); a claim checked on one seed, with no
    interval, is said as such."""
    from ..judging.seeds import HOLDS, OPEN, REFUTED, SATURATED

    def word(c: dict) -> str:
        if c.get("verdict"):
            return c["verdict"]
        if c.get("holds") is None:
            return "not checked"
        return "holds (one seed, no interval)" if c["holds"] else "does not hold (one seed, no interval)"

    words = [word(c) for c in claims]
    order = [HOLDS, REFUTED, OPEN, SATURATED, "holds (one seed, no interval)", "does not hold (one seed, no interval)",
             "not checked"]
    return ", ".join(f"{words.count(w)} {w}" for w in order if words.count(w)) or "none"


def render_figure(entry, ctx, out: Path) -> dict:
    """Compute, draw and check one entry; returns its record (paths, claims, seconds). A
    smoke render is marked on the figure and checks no claim."""
    from ..analysis import RENDERERS

    t0 = time.time()
    entry = entry.at(ctx.preset)  # its parameters at this preset
    r = RENDERERS.get(entry.renderer)
    values = r.compute(entry, ctx)
    claims = []
    for c in entry.claims:
        if ctx.smoke:
            claims.append({"text": c["text"], "check": c["check"], "holds": None, "measured": "not checked (smoke)"})
            continue
        claims.append(evaluate_safely(c, values))
    seeds = [] if ctx.smoke or not entry.claims else ctx.seeds(entry)
    if seeds:  # every claim also on each seed alone (judging/seeds.py: the verdict and the interval)
        from ..judging.seeds import over_seeds

        per_seed = {s: r.compute(entry, dataclasses.replace(ctx, seed=s)) for s in seeds}
        claims = [over_seeds(c, [(s, evaluate_safely(spec, per_seed[s])) for s in seeds])
                  for c, spec in zip(claims, entry.claims)]
    if hasattr(r, "judged") and not ctx.smoke:  # a renderer that judges its own family (regime unknown here)
        claims += r.judged(values, None)
    return _drawn(entry, ctx, out, r, values, claims, t0)


def render_evidence(entry, ctx, out: Path, runs: list[dict]) -> dict:
    """An entry drawn and checked from its runs' evidence (``analysis.evidence``: the spectra
    each run keeps; ``spectra`` and ``local_global`` entries), for a rung whose runs are not
    all in one store: the curves and claims over seeds ``render_figure`` computes from the
    store; its record likewise."""
    from ..analysis import RENDERERS
    from ..analysis.evidence import claims, values_of

    t0 = time.time()
    entry = entry.at(ctx.preset)
    from ..judging.ladder import summary

    values = values_of(entry, runs, curves=True)
    matched = summary(runs)["matched"]
    return _drawn(entry, ctx, out, RENDERERS.get(entry.renderer), values, claims(entry, runs, matched), t0, matched)


def _drawn(entry, ctx, out: Path, r, values: dict, claims: list[dict], t0: float, matched: bool | None = None) -> dict:
    """Draw the entry's values, write its figure and JSON (and the Markdown of a renderer that
    writes one, with ``matched``: the regime its verdicts are said at, None where unknown),
    and return its record."""
    from ..files import write_bytes, write_json
    from ..analysis.plots import save_figure

    # the line under a figure says how the runs differ from the paper's: not at the paper preset
    differs = entry.differs_at(ctx.preset)
    precision = ctx.trained_in(entry)
    if "bf16" in precision:  # the papers' (released) codes train in fp32
        differs = [*differs, f"runs trained in {precision} (bf16: autocast; the papers' codes train in fp32)"]
    if ctx.overrides:  # --set: every run of the entry trained so
        # said as what replaces the preset's values, not beside them (the preset's line names its own)
        differs = [*differs, f"every run with --set {describe(ctx.overrides)} (replacing the preset's value"
                             f"{'s' if len(describe(ctx.overrides).split(', ')) > 1 else ''} named above)"]
    fig = r.draw(values, dataclasses.replace(entry, differs=differs))
    if ctx.smoke:
        fig.text(0.5, 1.0, SMOKE_NOTE, ha="center", va="bottom", fontsize=8, color="#b00000", weight="bold")
    paths = save_figure(fig, out, entry.name)
    if hasattr(r, "markdown"):
        write_bytes(out / f"{entry.name}.md", r.markdown(values, matched).encode())
        paths = [*paths, out / f"{entry.name}.md"]
    write_json(out / f"{entry.name}.json", {"entry": entry.name, "preset": ctx.preset, "smoke": ctx.smoke,
                                            "precision": precision, "overrides": ctx.overrides,
                                            "values": values, "claims": claims,
                                            "differs": differs})
    return {"entry": entry.name, "files": [str(p) for p in paths], "precision": precision,
            "overrides": ctx.overrides, "claims": claims,
            "seconds": round(time.time() - t0, 2)}


def figure_record(e, run, explain=str) -> dict:
    """One figure of a session (``session.Session``) rendered, or why not, said through
    ``run.say``; ``explain``: the words for an error (the CLI adds the command that trains a
    missing run)."""
    say, per_entry = run.say, run.per_entry
    if isinstance(per_entry[e.name], str):
        say(f"figures: {e.name}: {per_entry[e.name]}")
        return {"entry": e.name, "error": per_entry[e.name]}
    if e.not_rendered:
        say(f"figures: {e.name}: not rendered ({e.not_rendered})")
        return {"entry": e.name, "not_rendered": e.not_rendered}
    if lacking := lacking_data(per_entry[e.name], run.failed):
        say(f"figures: {e.name}: not rendered: {lacking}")
        return {"entry": e.name, "error": lacking}
    try:
        rec = render_figure(e, run.ctx, run.out)
    except CollapseLabError as err:
        err = explain(err)
        say(f"figures: {e.name}: not rendered: {err}")
        return {"entry": e.name, "error": str(err)}
    say(f"figures: {e.name} -> {run.out / e.name}.png ({rec['seconds']:.1f} s, runs in {rec['precision']}); claims: "
        + verdict_counts(rec["claims"]) + (f" {STAND_IN}" if run.ctx.preset == "quick" else ""))
    return rec


def table_record(e, run, compare_paper: bool = False, explain=str) -> tuple[dict, str | None]:
    """One table of a session rendered into md, csv, tex and json, or why not, said through
    ``run.say``: (its record, its Markdown or None)."""
    from ..analysis import RENDERERS
    from ..analysis.renderers.table_format import render_all
    from ..files import write_bytes, write_json

    say, ctx, out, per_entry = run.say, run.ctx, run.out, run.per_entry
    preset, smoke = ctx.preset, ctx.smoke
    if isinstance(per_entry[e.name], str) or e.not_rendered:
        why = per_entry[e.name] if isinstance(per_entry[e.name], str) else e.not_rendered
        say(f"{e.name}: not rendered ({why})")
        return {"entry": e.name, "not_rendered": why}, None
    if lacking := lacking_data(per_entry[e.name], run.failed):
        say(f"{e.name}: not rendered: {lacking}")
        return {"entry": e.name, "error": lacking}, None
    try:
        values = RENDERERS.get(e.renderer).compute(e.at(preset), ctx)
    except CollapseLabError as err:
        err = explain(err)
        say(f"{e.name}: not rendered: {err}")
        return {"entry": e.name, "error": str(err)}, None
    values["smoke"] = smoke  # the header says so
    values["precision"] = ctx.trained_in(e)  # and the precision the runs trained in
    values["overrides"] = describe(ctx.overrides)  # and --set
    text = render_all(values, e, compare_paper)
    for ext in ("md", "csv", "tex"):
        write_bytes(out / f"{e.name}.{ext}", text[ext].encode())
    write_json(out / f"{e.name}.json", values)
    na = sorted({(c["row"], c["not_available"]) for c in values["cells"]
                 if c.get("not_available") and c["not_available"] != "derived"})
    filled = sum(c["ours_mean"] is not None for c in values["cells"])
    say(f"{e.name} -> {out / e.name}.md ({filled} of {len(values['cells'])} cells; "
        f"{len({r for r, _ in na})} row(s) not available; runs in {values['precision']})")
    return {"entry": e.name, "files": [str(out / f"{e.name}.{x}") for x in ("md", "csv", "tex", "json")],
            "precision": values["precision"], "overrides": ctx.overrides,
            "not_available": [{"row": r, "why": w} for r, w in na], "cells": values["cells"]}, text["md"]
