"""``collapse-lab export tensorboard``: a store's runs as TensorBoard event files."""
from __future__ import annotations

import json

import click

from .options import json_option, store_option


@click.command("export")
@click.argument("kind", type=click.Choice(["tensorboard"]))
@store_option()
@click.option("--out", required=True, type=click.Path(file_okay=False), help="TensorBoard log folder (one sub-folder per run).")
@json_option
def export_cmd(kind, store, out, as_json):
    """Round metrics, per-client local losses and the probe's spectrum summaries of every
    run in --store, readable by `tensorboard --logdir OUT`."""
    from ..actions.export import export

    folders = export(store, out=out)
    click.echo(json.dumps({"folders": folders}, indent=1) if as_json else
               f"{len(folders)} run(s) written to {out}; view with: tensorboard --logdir {out}")
