"""``collapse-lab tables``: every table of the papers beside the printed numbers. Trains the
runs that are missing (through the sweep engine), then writes ``<out>/<name>.md``, ``.csv``,
``.tex`` and ``.json`` (every cell with the runs it averages and their values)."""
from __future__ import annotations

import json
import time

import click

from ..errors import CollapseLabError
from .overrides import describe
from .catalogue_cmd import catalogue_options


@click.command("tables")
@catalogue_options("tables", "Output folder.", "List the catalogue's tables with their runs present/missing.",
                   "Print every table's cells (with their runs) as JSON on stdout.")
@click.option("--compare-paper", is_flag=True, help="Put the paper's printed value and the difference beside each cell.")
def tables_cmd(names, preset, store, out, list_, no_train, backend, workers, stack, address, as_json, dry_run_, smoke,
               keep, time_limit, compare_paper):
    """Render NAMEs (default: every table of the catalogue) at --preset."""
    from .catalogue_cmd import begin

    o = dict(list_=list_, no_train=no_train, backend=backend, workers=workers, stack=stack, address=address,
             as_json=as_json, dry_run_=dry_run_, smoke=smoke, keep=keep, time_limit=time_limit)
    run = begin("tables", names, preset, store, out, o, {"--compare-paper": compare_paper})
    if run is None:  # --dry-run, --list
        return
    records = [table_of(e, run, preset, smoke, compare_paper, print_md=not as_json and len(run.entries) == 1)
               for e in run.entries]
    t0, t_train, failed = run.t0, run.t_train, run.failed
    if as_json:
        click.echo(json.dumps({"preset": preset, "smoke": smoke, "train_seconds": round(t_train, 1),
                               "seconds": round(time.time() - t0, 1), "failed_runs": failed, "tables": records},
                              indent=1))
    errors = [r for r in records if "error" in r]
    run.say(f"{len(records) - len(errors)} of {len(records)} handled in {time.time() - t0:.1f} s "
            f"(training {t_train:.1f} s)")
    if errors or failed:
        raise SystemExit(1)


def table_of(e, run, preset: str, smoke: bool, compare_paper: bool, print_md: bool) -> dict:
    """One table rendered into md, csv, tex and json (or why not), said on stderr."""
    from ..analysis import RENDERERS
    from ..analysis.renderers.table_format import render_all
    from ..files import write_bytes, write_json
    from .catalogue_cmd import lacking_data, missing_line

    say, ctx, out, per_entry = run.say, run.ctx, run.out, run.per_entry
    if isinstance(per_entry[e.name], str) or e.not_rendered:
        why = per_entry[e.name] if isinstance(per_entry[e.name], str) else e.not_rendered
        say(f"{e.name}: not rendered ({why})")
        return {"entry": e.name, "not_rendered": why}
    if lacking := lacking_data(per_entry[e.name], run.failed):
        say(f"{e.name}: not rendered: {lacking}")
        return {"entry": e.name, "error": lacking}
    try:
        values = RENDERERS.get(e.renderer).compute(e.at(preset), ctx)
    except CollapseLabError as err:
        err = missing_line(err)
        say(f"{e.name}: not rendered: {err}")
        return {"entry": e.name, "error": str(err)}
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
    if print_md:
        click.echo(text["md"])
    return {"entry": e.name, "files": [str(out / f"{e.name}.{x}") for x in ("md", "csv", "tex", "json")],
            "precision": values["precision"], "overrides": ctx.overrides,
            "not_available": [{"row": r, "why": w} for r, w in na], "cells": values["cells"]}
