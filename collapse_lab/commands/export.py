"""``collapse-lab export tensorboard``: a store's runs as TensorBoard event files."""
from __future__ import annotations

import json
from pathlib import Path

import click

from ..errors import CollapseLabError


def export_runs(kind: str, paths: list[Path], logdir: Path) -> list[str]:
    """Write the event files of the runs at ``paths`` (``kind``: tensorboard); their folders."""
    from ..analysis.tensorboard import export
    from ..store import RunDir

    if kind != "tensorboard":
        raise CollapseLabError(f"--log {kind!r}: the one kind is tensorboard")
    return [str(export(RunDir(p), Path(logdir))) for p in paths]


@click.command("export", short_help="Write a store's metrics as TensorBoard event files.")
@click.argument("kind", type=click.Choice(["tensorboard"]))
@click.option("--store", default="checkpoints", show_default=True, type=click.Path(file_okay=False), help="Run store.")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="TensorBoard log folder (one sub-folder per run).")
@click.option("--json", "as_json", is_flag=True, help="Print the folders written as JSON.")
def export_cmd(kind, store, out, as_json):
    """Round metrics, per-client local losses and the probe's spectrum summaries of every
    run in --store, readable by `tensorboard --logdir OUT`."""
    from ..store import find_runs
    from ..store.paths import check_store_for_reading, check_store_for_writing

    runs = find_runs(check_store_for_reading(store))
    if not runs:
        raise CollapseLabError(f"no runs in {store}; train some first (collapse-lab train --store {store})")
    check_store_for_writing(out, "--out")  # a read-only or file target: one line, exit 2, before anything is written
    folders = export_runs(kind, [r.path for r in runs], Path(out))
    click.echo(json.dumps({"folders": folders}, indent=1) if as_json else
               f"{len(folders)} run(s) written to {out}; view with: tensorboard --logdir {out}")
