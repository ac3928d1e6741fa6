"""``collapse-lab export tensorboard``: a store's runs as TensorBoard event files."""
from __future__ import annotations

import json
from pathlib import Path

import click

from .options import json_option, store_option
from ..errors import CollapseLabError


@click.command("export")
@click.argument("kind", type=click.Choice(["tensorboard"]))
@store_option()
@click.option("--out", required=True, type=click.Path(file_okay=False), help="TensorBoard log folder (one sub-folder per run).")
@json_option
def export_cmd(kind, store, out, as_json):
    """Round metrics, per-client local losses and the probe's spectrum summaries of every
    run in --store, readable by `tensorboard --logdir OUT`."""
    from ..store import find_runs
    from ..store.paths import check_store_for_reading, check_store_for_writing

    runs = find_runs(check_store_for_reading(store))
    if not runs:
        raise CollapseLabError(f"no runs in {store}; train some first (collapse-lab train --store {store})")
    from ..files import missing_folders, remove_empty

    created = missing_folders(Path(out))
    check_store_for_writing(out, "--out")  # a read-only or file target: one line, exit 2, before anything is written
    from ..analysis.tensorboard import export

    try:
        folders = [str(export(r, Path(out))) for r in runs]
    except BaseException:
        remove_empty(created)  # no empty --out left (each run's log removes its own files)
        raise
    click.echo(json.dumps({"folders": folders}, indent=1) if as_json else
               f"{len(folders)} run(s) written to {out}; view with: tensorboard --logdir {out}")
