"""``collapse-lab train``: federated runs into the run store, one at a time here or on the
local pool (``--workers``), each with per-round global and client checkpoints. The run's
options come from their one table (``run_options``); this file adds the command's own."""
from __future__ import annotations

import json
import sys

import click
from click.core import ParameterSource

from ..signals import exit_status, install_stop_handlers, restore_handlers
from ..timelimit import deadline
from .common import data_root_option, time_limit_option
from .options import device_option, json_option, precision_option, store_option, workers_option
from .run_options import run_options


@click.command()
@run_options
@data_root_option
@device_option
@precision_option
@store_option("Run store folder (the analyses read it with the same option).", name="out")
@click.option("--config", type=click.Path(dir_okay=False), help="YAML/TOML/JSON file of options; flags override it.")
@click.option("--overwrite", is_flag=True, help="Retrain from scratch, replacing whatever run folder has the name "
                                                 "(another configuration, a diverged run), after saying what it replaces.")
@click.option("--resume", is_flag=True, help="Continue unfinished runs from their last complete round, and extend complete "
                                              "runs to a larger --rounds (bit-identical on CPU).")
@click.option("--log", "log_to", nargs=2, multiple=True, metavar="KIND DIR",
              help="Also log each run's metrics as its rounds end: tensorboard DIR (event files) or wandb DIR (a W&B "
                   "run, offline unless WANDB_MODE=online); repeatable.")
@time_limit_option
@workers_option("Runs trained at once, each in its own process (default 1); each run stores the same bytes.")
@json_option
@click.pass_context
def train(ctx, **params):
    """Train FedAvg (+ regularizer) runs and store per-round global and client checkpoints.

    With no options: digits, 10 clients, alpha in {0.01, 0.05, 0.25, inf}, into ./checkpoints.
    """
    from ..actions.logs import where_logs_went
    from ..actions.train import train as train_runs
    from ..training.stops import StopFlag

    own = ("out", "config", "overwrite", "resume", "workers", "time_limit", "log_to", "as_json")
    unset = (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP, None)  # the resolver owns the defaults
    flags = {k: v for k, v in params.items() if k not in own and ctx.get_parameter_source(k) not in unset}
    stop = StopFlag(deadline(params["time_limit"]))
    old_handlers = install_stop_handlers(stop, lambda m: click.echo(m, err=True))
    try:
        result = train_runs(params["out"], flags=flags, config_file=params["config"], overwrite=params["overwrite"],
                            resume=params["resume"], workers=params["workers"], time_limit=params["time_limit"],
                            log_to=params["log_to"], say=lambda m: click.echo(m, err=True), bar=_bar,
                            log=None if sys.stderr.isatty() else (lambda m: click.echo(m, err=True)), stop=stop)
    finally:
        restore_handlers(old_handlers)
    if result.stopped is not None:
        click.echo(result.stopped_line(), err=True)
        if params["as_json"]:
            click.echo(json.dumps(result.as_json(), indent=2))
        ctx.exit(exit_status(result.stopped["reason"]))
    click.echo(json.dumps(result.as_json(), indent=2) if params["as_json"] else "\n".join(result.lines()))
    for kind, folder in dict.fromkeys(params["log_to"]):
        click.echo(where_logs_went(kind, folder), err=True)
    if result.diverged:
        ctx.exit(1)


def _bar(total: int):
    """The progress bar over every local step (on a terminal; a log, nohup or a cluster job,
    gets one plain line per round instead)."""
    from tqdm import tqdm

    return tqdm(total=total, unit="step", desc="train", file=sys.stderr, dynamic_ncols=True, disable=None,
                mininterval=0.5)
