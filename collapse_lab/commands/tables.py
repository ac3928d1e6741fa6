"""``collapse-lab tables``: every table of the papers beside the printed numbers. Trains the
runs that are missing (through the sweep engine), then writes ``<out>/<name>.md``, ``.csv``,
``.tex`` and ``.json`` (every cell with the runs it averages and their values)."""
from __future__ import annotations

import json
import time

import click

from ..errors import CollapseLabError
from .common import given_data_root, given_precision, precision_line
from .overrides import describe, given_overrides
from .catalogue_cmd import catalogue_options


@click.command("tables", short_help="Reproduce the papers' tables beside the printed numbers (training missing runs).")
@catalogue_options("tables", "Output folder.", "List the catalogue's tables with their runs present/missing.",
                   "Print every table's cells (with their runs) as JSON on stdout.")
@click.option("--compare-paper", is_flag=True, help="Put the paper's printed value and the difference beside each cell.")
def tables_cmd(names, preset, store, out, list_, no_train, backend, workers, stack, address, as_json, dry_run_, smoke,
               keep, time_limit, compare_paper):
    """Render NAMEs (default: every table of the catalogue) at --preset."""
    from ..analysis import RENDERERS
    from ..analysis.catalogue import pick
    from ..analysis.context import Context
    from ..analysis.renderers.table_format import render_all
    from ..files import write_bytes, write_json
    from ..sweep.backends import Interrupted
    from .catalogue_cmd import check_training, dry_run, lacking_data, list_entries, plan, smoke_paths, stop_if_late, \
        train_missing

    check_training(workers, stack, backend, address, list_, no_train,
                   **{"--compare-paper": compare_paper, "--dry-run": dry_run_, "--time-limit": time_limit})
    if dry_run_ and time_limit:
        raise CollapseLabError("--time-limit has no effect with --dry-run (nothing trains); drop it")
    entries = pick(names, "table")
    if dry_run_:
        return dry_run(entries, smoke, as_json, None, keep)
    store, out = smoke_paths(smoke, store, out, "tables")
    say = (lambda m: click.echo(f"tables: {m}", err=True))
    notes: list[str] = []  # said after the first line, which names the precision
    configs, per_entry, by_name = plan(entries, preset, store, lambda m: None, smoke, keep, note=notes.append)
    if list_:
        return list_entries(entries, per_entry, store, out, by_name, as_json, suffix="md")
    say(f"{len(configs)} run(s) for {len(entries)} entr{'y' if len(entries) == 1 else 'ies'}, precision "
        f"{precision_line(configs, auto=given_precision() is None)}")
    for n in notes:
        say(n)
    t0 = time.time()
    try:
        failed = [] if no_train else train_missing(configs, store, backend, workers, stack, address, say,
                                                   drop_checkpoints=smoke, time_limit=time_limit)
    except Interrupted as e:
        from ..signals import exit_status

        say(f"interrupted ({e.signame}): finished runs are kept; the same command continues")
        raise SystemExit(exit_status(e.signame)) from None
    stop_if_late(failed, say)
    t_train = time.time() - t0
    ctx = Context(store, preset, smoke=smoke, data_root=given_data_root(), precision=given_precision(),
                  overrides=given_overrides())
    records = []
    for e in entries:
        if isinstance(per_entry[e.name], str) or e.not_rendered:
            why = per_entry[e.name] if isinstance(per_entry[e.name], str) else e.not_rendered
            records.append({"entry": e.name, "not_rendered": why})
            say(f"{e.name}: not rendered ({why})")
            continue
        if lacking := lacking_data(per_entry[e.name], failed):
            records.append({"entry": e.name, "error": lacking})
            say(f"{e.name}: not rendered: {lacking}")
            continue
        try:
            values = RENDERERS.get(e.renderer).compute(e.at(preset), ctx)
        except CollapseLabError as err:
            records.append({"entry": e.name, "error": str(err)})
            say(f"{e.name}: not rendered: {err}")
            continue
        values["smoke"] = smoke  # the header says so
        values["precision"] = ctx.trained_in(e)  # and the precision the runs trained in
        values["overrides"] = describe(ctx.overrides)  # and --set
        text = render_all(values, e, compare_paper)
        for ext in ("md", "csv", "tex"):
            write_bytes(out / f"{e.name}.{ext}", text[ext].encode())
        write_json(out / f"{e.name}.json", values)
        na = sorted({(c["row"], c["not_available"]) for c in values["cells"]
                     if c.get("not_available") and c["not_available"] != "derived"})
        records.append({"entry": e.name, "files": [str(out / f"{e.name}.{x}") for x in ("md", "csv", "tex", "json")],
                        "precision": values["precision"], "overrides": ctx.overrides, "not_available": [{"row": r, "why": w} for r, w in na],
                        "cells": values["cells"]})
        filled = sum(c["ours_mean"] is not None for c in values["cells"])
        say(f"{e.name} -> {out / e.name}.md ({filled} of {len(values['cells'])} cells; "
            f"{len({r for r, _ in na})} row(s) not available; runs in {values['precision']})")
        if not as_json and len(entries) == 1:
            click.echo(text["md"])
    if as_json:
        click.echo(json.dumps({"preset": preset, "smoke": smoke, "train_seconds": round(t_train, 1), "seconds": round(time.time() - t0, 1),
                               "failed_runs": failed, "tables": records}, indent=1))
    errors = [r for r in records if "error" in r]
    say(f"{len(records) - len(errors)} of {len(records)} handled in {time.time() - t0:.1f} s (training {t_train:.1f} s)")
    if errors or failed:
        raise SystemExit(1)
