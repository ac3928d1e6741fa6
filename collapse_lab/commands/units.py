"""``collapse-lab units RUN --round R --client K``: a client's local training replayed with and
without the run's regularizer (``catalogue.unit_replay``), per epoch."""
from __future__ import annotations

import json

import click

from .common import data_root_option
from .options import json_option


@click.command("units")
@click.option("--run", "run_path", required=True, type=click.Path(file_okay=False), help="A run folder.")
@click.option("--round", "round_", type=int, default=1, show_default=True,
              help="The round whose local training is replayed (from the global model of the round before).")
@click.option("--client", type=int, default=0, show_default=True, help="The client.")
@click.option("--epochs", type=int, default=None, help="Local epochs (default: the run's).")
@json_option
@data_root_option
def units_cmd(run_path, round_, client, epochs, as_json, data_root):
    """Replay a client's local training with and without the run's regularizer."""
    from ..actions.units import units

    out = units(run_path, round=round_, client=client, epochs=epochs, data_root=data_root)
    if as_json:
        click.echo(json.dumps(out, indent=1))
        return
    from ..analysis.text import units_lines

    click.echo("\n".join(units_lines(out)))
