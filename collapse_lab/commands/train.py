"""``collapse-lab train``: federated runs into the run store, one at a time here or on the
local pool (``--workers``), each with per-round global and client checkpoints."""
from __future__ import annotations

import json
import sys

import click
from click.core import ParameterSource

from ..signals import exit_status, install_stop_handlers, restore_handlers
from ..timelimit import TIME_LIMIT, continue_command, deadline
from .common import data_root_option, time_limit_option
from .options import device_option, json_option, precision_option, store_option


def _registry(kind: str):
    """The registry of a plugin kind, imported when asked for (help, errors)."""
    import importlib

    module, name = {"dataset": ("collapse_lab.data", "DATASETS"), "model": ("collapse_lab.models", "MODELS"),
                    "partition": ("collapse_lab.partition", "PARTITIONS"),
                    "method": ("collapse_lab.methods", "METHODS"),
                    "reg": ("collapse_lab.regularizers", "REGULARIZERS"),
                    "augment": ("collapse_lab.augment", "STEPS")}[kind]
    return getattr(importlib.import_module(module), name)


class PluginOption(click.Option):
    """An option whose help ends with the names its registry holds (found when help is shown)."""

    def __init__(self, *args, registry: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.registry = registry

    def get_help_record(self, ctx):
        base = self.help
        self.help = f"{base} One of: {_registry(self.registry).help()}."
        try:
            return super().get_help_record(ctx)
        finally:
            self.help = base


def _explicit(ctx: click.Context, params: dict) -> dict:
    """The options the user gave (defaults left out: the resolver owns them)."""
    out = {}
    for k, v in params.items():
        src = ctx.get_parameter_source(k)
        if src not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP, None):
            out[k] = v
    return out


@click.command()
@click.option("--dataset", cls=PluginOption, registry="dataset", help="Data set (default digits).")
@data_root_option
@click.option("--download", is_flag=True, help="Download mnist/cifar with torchvision (needs the optional extra).")
@click.option("--dataset-option", multiple=True, metavar="KEY=VALUE", help="Loader option, e.g. dim=64 for gaussian (repeatable).")
@click.option("--image-size", type=int, help="Resize images (tinyimagenet, domains).")
@click.option("--model", cls=PluginOption, registry="model", help="Model (default: the data set's).")
@click.option("--partition", cls=PluginOption, registry="partition", help="Client partition (default dirichlet).")
@click.option("--alpha", multiple=True, help="Dirichlet concentration (repeatable; inf = IID). Default: 0.01 0.05 0.25 inf.")
@click.option("--classes-per-client", type=int, multiple=True, help="M, the classes per client of the pathological and scenes partitions (repeatable; 2).")
@click.option("--min-size", type=int, help="Fewest samples per client (Dirichlet; 10).")
@click.option("--partition-option", multiple=True, metavar="KEY=VALUE",
              help="An option the partition declares beyond --alpha/--min-size/--classes-per-client (repeatable).")
@click.option("--clients", type=int, help="Number of clients (10).")
@click.option("--sample-fraction", type=float, help="Share of clients per round (1).")
@click.option("--method", cls=PluginOption, registry="method", help="Federated method (default fedavg).")
@click.option("--method-option", multiple=True, metavar="KEY=VALUE",
              help="Method option, e.g. mu=0.01 (fedprox, moon), tau=0.5 (moon), gmv_weight=1 (fedetf) (repeatable).")
@click.option("--server-momentum", type=float, help="fedavgm: server momentum (paper 0.5).")
@click.option("--server-lr", type=float, help="fedavgm, scaffold: server learning rate (1.0).")
@click.option("--gmv-warmup", type=int, help="fedetf: first round using the memory vectors (half the rounds).")
@click.option("--reg", cls=PluginOption, registry="reg", help="Regularizer on z (default none).")
@click.option("--reg-option", multiple=True, metavar="KEY=VALUE",
              help="Regularizer option, e.g. groups=8 (structured-decov), mu=0.5 lam=2.5 (feduv) (repeatable).")
@click.option("--beta", type=float, help="Regularizer weight (Eq. 9); default 0.1, feduv 1.")
@click.option("--decorr-norm", help="FedDecorr scaling, short for --reg-option normalization=...: official (the released "
                                    "code's, which produced the papers' numbers; default at --preset paper) or paper "
                                    "(Eq. 8 as printed; default at --preset quick). See docs/conventions.md.")
@click.option("--rounds", type=int, help="Communication rounds (paper preset: 100 CIFAR, 50 TinyImageNet, 300 domains, 30 otherwise).")
@click.option("--local-epochs", type=int, help="Local epochs per round (paper 10).")
@click.option("--batch-size", type=int, help="Local batch size (64).")
@click.option("--lr", type=float, help="Local SGD learning rate (paper 0.01).")
@click.option("--momentum", type=float, help="Local SGD momentum (0.9).")
@click.option("--weight-decay", type=float, help="Local weight decay (paper 1e-5 CIFAR-10, 1e-4 otherwise).")
@click.option("--seed", type=int, multiple=True, help="Run seed (repeatable; 0).")
@device_option
@click.option("--augment", cls=PluginOption, registry="augment",
              help="Batched on-device augmentation: auto (the paper's for the data set; default), none, or steps joined by '+'.")
@precision_option
@click.option("--channels-last/--no-channels-last", default=None, help="channels_last memory format for image models (on; speed only).")
@click.option("--compile", help="torch.compile the model: off (default), default, reduce-overhead, max-autotune (speed only).")
@click.option("--cuda-graphs", help="Capture each local step as a CUDA graph: auto (default: on CUDA when the method's local "
                                    "training is plain SGD and the regularizer allows), on, off (speed only).")
@click.option("--parallel-clients", type=int,
              help="Clients trained at once (0, default: 5 on CUDA with graphs, one per intra-op thread on the CPU for "
                   "fedavg/fedavgm/fednova/fedbn, else 1; speed only).")
@click.option("--local-eval", is_flag=True, help="Also evaluate every client's model on the test set after local training.")
@click.option("--probe", type=int, help="Test samples on which each round's global-model spectrum is logged to "
                                        "metrics.jsonl (1000; 0: none; no effect on what trains).")
@click.option("--probe-layers", is_flag=True, default=None,
              help="Also log every layer's effective rank, n above tau and participation ratio on the probe set, for the "
                   "global model and client 0, each round (no effect on what trains).")
@store_option("Run store folder (the analyses read it with the same option).", name="out")
@click.option("--keep-local", help="Client checkpoints to keep: all (default), last, none, every:N")
@click.option("--keep-global", help="Global checkpoints to keep: all (default: every round and round 0), every:N "
                                    "(rounds 0, N, 2N, ... and the last), last")
@click.option("--preset", help="paper (Sec. 5.1 settings; default), cpu (10 rounds of 2 local epochs at lr 0.05: real images "
                                "on a CPU) or quick (2 short rounds).")
@click.option("--config", type=click.Path(dir_okay=False), help="YAML/TOML/JSON file of options; flags override it.")
@click.option("--tag", help="Suffix for the run folder names.")
@click.option("--overwrite", is_flag=True, help="Retrain from scratch, replacing whatever run folder has the name "
                                                 "(another configuration, a diverged run), after saying what it replaces.")
@click.option("--resume", is_flag=True, help="Continue unfinished runs from their last complete round, and extend complete "
                                              "runs to a larger --rounds (bit-identical on CPU).")
@click.option("--log", "log_to", nargs=2, multiple=True, metavar="KIND DIR",
              help="Also log each run's metrics as its rounds end: tensorboard DIR (event files) or wandb DIR (a W&B "
                   "run, offline unless WANDB_MODE=online); repeatable.")
@time_limit_option
@click.option("--workers", type=int, default=None,
              help="Runs trained at once, each in its own process (default 1); each run stores the same bytes.")
@json_option
@click.pass_context
def train(ctx, **params):
    """Train FedAvg (+ regularizer) runs and store per-round global and client checkpoints.

    With no options: digits, 10 clients, alpha in {0.01, 0.05, 0.25, inf}, into ./checkpoints.
    """
    from ..actions.train import train as train_runs
    from ..training.stops import StopFlag

    own = ("out", "config", "overwrite", "resume", "workers", "time_limit", "log_to", "as_json")
    flags = {k: v for k, v in _explicit(ctx, params).items() if k not in own}
    stop = StopFlag(deadline(params["time_limit"]))
    old_handlers = install_stop_handlers(stop, lambda m: click.echo(m, err=True))
    try:
        result = train_runs(params["out"], flags=flags, config_file=params["config"], overwrite=params["overwrite"],
                            resume=params["resume"], workers=params["workers"], time_limit=params["time_limit"],
                            log_to=params["log_to"], say=lambda m: click.echo(m, err=True), bar=_bar, log=_log(),
                            stop=stop)
    finally:
        restore_handlers(old_handlers)
    if result.stopped is not None:
        _say_stopped(result, params["as_json"])
        ctx.exit(exit_status(result.stopped["reason"]))
    if params["as_json"]:
        click.echo(json.dumps({"runs": result.runs, "seconds": round(result.seconds, 2)}, indent=2))
    else:
        for s in result.runs:
            acc = f"test acc {s['final_test_acc']:.4f}" if "final_test_acc" in s else s["status"]
            click.echo(f"{s['run']}: {acc}")
        click.echo(f"{result.trained - len(result.diverged)} run(s) trained in {result.seconds:.1f} s"
                   + (f"; {len(result.diverged)} diverged: {', '.join(result.diverged)}" if result.diverged else ""))
    from ..actions.logs import where_logs_went

    for kind, folder in dict.fromkeys(params["log_to"]):
        click.echo(where_logs_went(kind, folder), err=True)
    if result.diverged:
        ctx.exit(1)


def _bar(total: int):
    """The progress bar over every local step (on a terminal; none in a log)."""
    from tqdm import tqdm

    return tqdm(total=total, unit="step", desc="train", file=sys.stderr, dynamic_ncols=True, disable=None,
                mininterval=0.5)


def _log():
    """A log (not a terminal: nohup, a cluster job) gets one plain line per round instead of the bar."""
    return None if sys.stderr.isatty() else (lambda msg: click.echo(msg, err=True))


def _say_stopped(result, as_json: bool) -> None:
    """Ctrl-C, SIGTERM or --time-limit stopped the runs: where, and the command that continues."""
    st, cmd = result.stopped, continue_command(resume=True)
    if st["run"] is None:  # the pool: the runs under way stopped at their last complete round
        click.echo(f"{st['reason']}: the runs under way stopped at their last complete round. Continue with: {cmd}",
                   err=True)
        return
    where = f"after client {st['client']}" if st["client"] is not None else "before storing any client"
    if st["reason"] == TIME_LIMIT and st["client"] is None:
        where = "before it started (the next round would not end in time)"
    left = st["left"]
    click.echo(f"{st['reason']}: stopped {st['run'].name} in round {st['round']} {where}; rounds up to "
               f"{st['round'] - 1} are stored" + (f"; {left} more run(s) to train" if left else "")
               + f". Continue with: {cmd}", err=True)
    if as_json:
        click.echo(json.dumps({"runs": result.runs, "stopped": {"run": str(st["run"]), "round": st["round"],
                                                                "reason": st["reason"], "continue": cmd},
                               "seconds": round(result.seconds, 2)}, indent=2))
