"""``collapse-lab train``: federated runs into the run store, one at a time here or on the
local pool (``--workers``), each with per-round global and client checkpoints."""
from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import click
from click.core import ParameterSource

from ..config import alpha_str
from ..errors import CollapseLabError
from ..signals import exit_status
from ..timelimit import TIME_LIMIT, continue_command, deadline
from .common import data_root_option, time_limit_option
from .options import device_option, json_option, precision_option, store_option
from .train_report import TrainReport


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
    from ..sweep import service

    if params["resume"] and params["overwrite"]:
        raise CollapseLabError("--resume and --overwrite contradict each other; choose one")
    log_to = params.pop("log_to", ())
    from .train_pool import check_pool, run_pool

    check_pool(params["workers"], log_to)
    if log_to:
        from .export import check_log

        for kind, folder in log_to:
            check_log(kind, folder)
    explicit = _explicit(ctx, params)
    auto = _precision_open(explicit, params["config"])
    configs, adopted = _train_configs(explicit, params["config"], params["out"], auto)
    # store, names, data, time limit, disk and one writer per run: refused here, before any run trains
    from ..plan.estimate import check_time_limit  # torch: loaded when train runs, not for --help
    prepared = service.begin(configs, params["out"], "--store", params["overwrite"], params["resume"],
                             lambda cs: check_time_limit(params["time_limit"], cs))
    # the first line after the checks (a refusal stays one line): the precision of the runs
    from ..runspec.expand import precision_line

    click.echo(f"train: {len(configs)} run(s), precision {precision_line(configs, auto=auto)}", err=True)
    for note in dict.fromkeys([*adopted, *(n for p in prepared for n in p.notes)]):  # each note once
        click.echo(f"note: {note}", err=True)
    for p in prepared:
        if p.action == "skip":
            click.echo(f"{p.path}: already complete with this configuration (--overwrite to retrain)", err=True)
    t0 = time.time()
    report = TrainReport(log_to)
    pool = (params["workers"] or 1) > 1 and any(p.action in ("train", "resume") for p in prepared)
    (run_pool(ctx, prepared, report, params) if pool else _train_prepared(ctx, prepared, report, params, t0))
    for p in prepared:
        if p.action == "skip":
            report.summaries.append({"run": str(p.path), "status": "skipped (complete)",
                                     "alpha": alpha_str(p.config.alpha), "seed": p.config.seed})
    todo = [p for p in prepared if p.action in ("train", "resume")]
    if params["as_json"]:
        click.echo(json.dumps({"runs": report.summaries, "seconds": round(time.time() - t0, 2)}, indent=2))
    else:
        for s in report.summaries:
            acc = f"test acc {s['final_test_acc']:.4f}" if "final_test_acc" in s else s["status"]
            click.echo(f"{s['run']}: {acc}")
        click.echo(f"{len(todo) - len(report.diverged)} run(s) trained in {time.time() - t0:.1f} s"
                   + (f"; {len(report.diverged)} diverged: {', '.join(report.diverged)}" if report.diverged else ""))
    if log_to:
        from .export import where_logs_went

        for kind, folder in dict.fromkeys(log_to):
            click.echo(where_logs_went(kind, folder), err=True)
    if report.diverged:
        ctx.exit(1)


def _train_configs(explicit: dict, config_file, store, auto: bool) -> tuple[list, list[str]]:
    """The runs of the options (the one resolver) and the notes of stored runs adopted in the
    other precision (a stored run keeps the precision it trained in when none was chosen)."""
    from ..runspec.resolve import resolve_runs

    configs = resolve_runs(explicit, config_file)
    if not auto:
        return configs, []
    from ..store.naming import in_stored_precision

    found = [in_stored_precision(Path(store), c) for c in configs]
    return [c for c, _ in found], [note for _, note in found if note]  # notes said after the checks


def _train_prepared(ctx, prepared, report, params: dict, t0: float) -> None:
    """Train the prepared runs here with a progress bar (one plain line per round in a log);
    Ctrl-C, SIGTERM or the time limit stop after the current client, saying how to continue."""
    from tqdm import tqdm

    from ..sweep import service
    from ..training.prepare import total_steps
    from ..training.stops import Interrupted, StopFlag

    todo = [p for p in prepared if p.action in ("train", "resume")]
    stop = StopFlag(deadline(params["time_limit"]))
    old_handlers = _install_stop_handlers(stop)
    # a log (not a terminal: nohup, a cluster job) gets one plain line per round instead of the bar
    log = None if sys.stderr.isatty() else (lambda msg: click.echo(msg, err=True))
    try:  # disable=None: the bar shows on a terminal and stays out of logs
        with tqdm(total=sum(total_steps(p) for p in todo), unit="step", desc="train", file=sys.stderr,
                  dynamic_ncols=True, disable=None, mininterval=0.5) as report.bar:
            service.train_here(prepared, on_step=lambda: report.bar.update(1), log=log, stop=stop, report=report)
    except Interrupted as e:
        cmd = continue_command(resume=True)
        where = f"after client {e.client}" if e.client is not None else "before storing any client"
        if e.signame == TIME_LIMIT and e.client is None:
            where = "before it started (the next round would not end in time)"
        left = len(todo) - len(report.summaries) - 1
        click.echo(f"{e.signame}: stopped {e.path.name} in round {e.round} {where}; rounds up to "
                   f"{e.round - 1} are stored" + (f"; {left} more run(s) to train" if left else "")
                   + f". Continue with: {cmd}", err=True)
        if params["as_json"]:
            click.echo(json.dumps({"runs": report.summaries, "stopped": {"run": str(e.path), "round": e.round,
                                                                         "reason": e.signame, "continue": cmd},
                                   "seconds": round(time.time() - t0, 2)}, indent=2))
        ctx.exit(exit_status(e.signame))
    finally:
        report.close()  # an interrupted run's live logs keep what was stored
        _restore_handlers(old_handlers)


def _precision_open(explicit: dict, config_file: str | None) -> bool:
    """Whether the run's precision is left to ``auto`` (neither --precision nor the config
    file chose fp32 or bf16)."""
    from ..config import load_config_file

    chosen = explicit.get("precision")
    if chosen is None and config_file:
        chosen = load_config_file(config_file).get("precision")
    return chosen in (None, "auto")


def _install_stop_handlers(stop) -> dict:
    """SIGINT/SIGTERM finish the current client, then stop with a resume hint; a second
    Ctrl-C stops at once."""
    def handler(signum, frame):
        if stop.is_set():
            raise KeyboardInterrupt
        stop.request(signal.Signals(signum).name)
        click.echo(f"\n{stop.requested} received: finishing the current client, then stopping "
                   "(press Ctrl-C again to stop now)", err=True)

    old = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            old[sig] = signal.signal(sig, handler)
        except ValueError:  # not the main thread (e.g. some test runners)
            pass
    return old


def _restore_handlers(old: dict) -> None:
    for sig, h in old.items():
        signal.signal(sig, h)
