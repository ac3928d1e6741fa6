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
    click.echo(f"{out['run']}: round {out['round']}, client {out['client']} ({out['images']} images), {out['reg']} "
               f"beta {out['beta']} {out['reg_options']}; {out['units']} units")
    for label in ("with", "without"):
        click.echo(f"{label} the regularizer:")
        click.echo(f"  {'epoch':>5} {'CE':>8} {'beta R':>10} {'dead':>5} {'died':>5} {'|dz| CE':>9} {'|dz| R':>9} "
                   f"{'dying CE':>9} {'dying R':>9}  layer grad norms CE / R")
        for e in out[label]:
            if e["epoch"] == 0:
                click.echo(f"  {0:>5} {'':>8} {'':>10} {e['dead']:>5}")
                continue
            lay = ", ".join(f"{k} {v['grad_ce']:.3g}/{v['grad_reg']:.3g}" for k, v in e["layers"].items())
            g = lambda v: "-" if v is None else f"{v:.3g}"  # noqa: E731
            click.echo(f"  {e['epoch']:>5} {e['ce']:>8.4f} {e['beta_reg']:>10.4g} {e['dead']:>5} {e['died']:>5} "
                       f"{e['z_unit_grad_ce']:>9.3g} {e['z_unit_grad_reg']:>9.3g} {g(e['dying_unit_grad_ce']):>9} "
                       f"{g(e['dying_unit_grad_reg']):>9}  {lay}")
