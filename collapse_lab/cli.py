"""The ``collapse-lab`` command line."""
from __future__ import annotations

import json
import shlex
import signal
import sys
import time
from pathlib import Path

import click
from click.core import ParameterSource

from .config import DEFAULT_ALPHAS, RunConfig, alpha_str, load_config_file, parse_alpha, preset_values
from .errors import CollapseLabError

DEFAULT_MODEL = {"digits": "mlp", "gaussian": "mlp", "mnist": "cnn", "cifar10": "mobilenetv2",
                 "cifar100": "mobilenetv2", "tinyimagenet": "mobilenetv2", "domains": "resnet18"}


METHOD_FLAGS = ("server_momentum", "server_lr", "gmv_warmup")  # named flags that fill method options


class Group(click.Group):
    """Turns CollapseLabError into one line on stderr and exit status 2."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except CollapseLabError as e:
            click.echo(f"error: {e}", err=True)
            ctx.exit(2)


@click.group(cls=Group)
@click.version_option(package_name="collapse-lab")
def cli():
    """Dimensional collapse of representations in heterogeneous federated learning."""


def _explicit(ctx: click.Context, name: str) -> bool:
    return ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP, None)


def _parse_key_values(items, flag: str = "--dataset-option", example: str = "dim=64") -> dict:
    out = {}
    for item in items:
        if "=" not in item:
            raise CollapseLabError(f"{flag} {item!r}: write KEY=VALUE, e.g. {example}")
        k, v = item.split("=", 1)
        try:
            out[k.replace("-", "_")] = json.loads(v)
        except json.JSONDecodeError:
            out[k.replace("-", "_")] = v
    return out


def build_configs(ctx: click.Context, params: dict) -> list[RunConfig]:
    """preset < config file < flags; --alpha, --seed and --classes-per-client expand into runs."""
    file_values = load_config_file(params["config"]) if params["config"] else {}
    fields = set(RunConfig.__dataclass_fields__)
    unknown = sorted(set(file_values) - fields - {"alphas", "seeds", *METHOD_FLAGS})
    if unknown:
        raise CollapseLabError(f"--config: unknown option(s) {', '.join(unknown)}")
    flag = {k: v for k, v in params.items() if k in fields or k in ("alpha", "seed", "classes_per_client")}
    explicit = {k for k in flag if _explicit(ctx, k)}
    dataset = params["dataset"] if "dataset" in explicit else file_values.get("dataset", "digits")
    preset = params["preset"] if "preset" in explicit else file_values.get("preset", "paper")
    values: dict = {"dataset": dataset, "preset": preset,
                    "model": DEFAULT_MODEL.get(dataset, "mlp"),
                    "partition": "domain" if dataset == "domains" else "dirichlet"}
    values.update(preset_values(preset, dataset))
    values.update(file_values)
    for k in explicit:
        values[k] = flag[k]
    values["dataset_options"] = {**file_values.get("dataset_options", {}), **_parse_key_values(params["dataset_option"])}
    method_options = {**file_values.get("method_options", {}),
                      **{k: file_values[k] for k in METHOD_FLAGS if k in file_values},
                      **_parse_key_values(params["method_option"], "--method-option", "mu=0.01")}
    for flag_name in METHOD_FLAGS:
        if params.get(flag_name) is not None:
            method_options[flag_name] = params[flag_name]
    values["method_options"] = method_options
    values["reg_options"] = {**file_values.get("reg_options", {}),
                             **_parse_key_values(params["reg_option"], "--reg-option", "groups=8")}
    if values.get("beta") is None:  # the regularizer's own default (FedDecorr 0.1, FedUV 1)
        from .regularizers import default_beta

        values["beta"] = default_beta(values.get("reg", "none"))
    # list-valued axes
    alphas = values.pop("alphas", None) or values.get("alpha")
    if "alpha" not in explicit and "alpha" not in file_values and "alphas" not in file_values:
        alphas = DEFAULT_ALPHAS
    alphas = [parse_alpha(a) for a in (alphas if isinstance(alphas, (list, tuple)) else [alphas])]
    seeds = values.pop("seeds", None) or values.get("seed", 0)
    seeds = list(seeds) if isinstance(seeds, (list, tuple)) else [seeds]
    cpcs = values.get("classes_per_client", 2)
    cpcs = list(cpcs) if isinstance(cpcs, (list, tuple)) else [cpcs]
    if values["partition"] == "domain" and "clients" not in explicit and "clients" not in file_values:
        values["clients"] = 0  # one client per domain, resolved once the data set is read
    if values["partition"] != "dirichlet":
        alphas = alphas[:1]
    if values["partition"] != "pathological":
        cpcs = cpcs[:1]
    configs = []
    for seed in seeds:
        for a in alphas:
            for m in cpcs:
                v = dict(values, alpha=a, seed=int(seed), classes_per_client=int(m))
                try:
                    configs.append(RunConfig(**{k: v[k] for k in fields if k in v}))
                except TypeError as e:
                    raise CollapseLabError(f"bad configuration: {e}") from None
    return configs


@cli.command()
@click.option("--dataset", default="digits", show_default=True, help="digits, gaussian, mnist, cifar10, cifar100, tinyimagenet, domains")
@click.option("--data-root", type=click.Path(file_okay=False), default=None, help="Folder holding the data set files.")
@click.option("--download", is_flag=True, help="Download mnist/cifar with torchvision (needs the optional extra).")
@click.option("--dataset-option", multiple=True, metavar="KEY=VALUE", help="Loader option, e.g. dim=64 for gaussian (repeatable).")
@click.option("--image-size", type=int, default=None, help="Resize images (tinyimagenet, domains).")
@click.option("--model", default="mlp", help="mlp (digits default), cnn, linear, mobilenetv2, resnet18, resnet20, resnet32")
@click.option("--partition", default="dirichlet", show_default=True, help="dirichlet, pathological, domain")
@click.option("--alpha", multiple=True, help="Dirichlet concentration (repeatable; inf = IID). Default: 0.01 0.05 0.25 inf.")
@click.option("--classes-per-client", type=int, multiple=True, default=[2], help="M of the pathological partition (repeatable).")
@click.option("--min-size", type=int, default=10, show_default=True, help="Fewest samples per client (Dirichlet).")
@click.option("--clients", type=int, default=10, show_default=True)
@click.option("--sample-fraction", type=float, default=1.0, show_default=True, help="Share of clients per round.")
@click.option("--method", default="fedavg", show_default=True,
              help="fedavg, fedavgm, fedprox, moon, scaffold, fednova, fedbn, fedetf")
@click.option("--method-option", multiple=True, metavar="KEY=VALUE",
              help="Method option, e.g. mu=0.01 (fedprox, moon), tau=0.5 (moon), gmv_weight=1 (fedetf) (repeatable).")
@click.option("--server-momentum", type=float, default=None, help="fedavgm: server momentum (paper 0.5).")
@click.option("--server-lr", type=float, default=None, help="fedavgm, scaffold: server learning rate (1.0).")
@click.option("--gmv-warmup", type=int, default=None, help="fedetf: first round using the memory vectors (half the rounds).")
@click.option("--reg", default="none", show_default=True, help="none, feddecorr, decov, structured-decov, feduv")
@click.option("--reg-option", multiple=True, metavar="KEY=VALUE",
              help="Regularizer option, e.g. groups=8 (structured-decov), mu=0.5 lam=2.5 (feduv) (repeatable).")
@click.option("--beta", type=float, default=None, help="Regularizer weight (Eq. 9); default 0.1, feduv 1.")
@click.option("--decorr-norm", default="paper", show_default=True, help="FedDecorr scaling: paper (Eq. 8) or official (released code).")
@click.option("--rounds", type=int, default=30, help="Communication rounds (paper preset: 100 CIFAR, 50 TinyImageNet, 300 domains, 30 otherwise).")
@click.option("--local-epochs", type=int, default=10)
@click.option("--batch-size", type=int, default=64)
@click.option("--lr", type=float, default=0.01)
@click.option("--momentum", type=float, default=0.9)
@click.option("--weight-decay", type=float, default=1e-4)
@click.option("--seed", type=int, multiple=True, default=[0], help="Run seed (repeatable).")
@click.option("--device", default="auto", show_default=True, help="auto (CUDA when present), cpu, cuda, cuda:N")
@click.option("--augment", default="auto", show_default=True,
              help="Batched on-device augmentation: auto (paper: cifar10 crop+flip, cifar100 crop+flip+autoaugment, "
                   "tinyimagenet autoaugment, else none), none, or steps joined by '+' from crop, flip, autoaugment.")
@click.option("--precision", default="auto", show_default=True,
              help="auto (bf16 autocast on CUDA, fp32 elsewhere), fp32, bf16 (CUDA only). Losses and regularizers stay fp32.")
@click.option("--channels-last/--no-channels-last", default=True, show_default=True,
              help="channels_last memory format for image models (speed only).")
@click.option("--compile", default="off", show_default=True,
              help="torch.compile the model: off, default, reduce-overhead (CUDA graphs), max-autotune (speed only).")
@click.option("--graphs", default="auto", show_default=True,
              help="Capture each local SGD step as a CUDA graph and train clients side by side (fedavg, fedavgm, "
                   "fednova, fedbn; any regularizer but feduv): auto (on CUDA), on (also on CPU, uncaptured), off.")
@click.option("--parallel-clients", type=int, default=0, show_default=True,
              help="Clients trained at once with --graphs (0: 5 on CUDA, 1 on CPU); speed only.")
@click.option("--local-eval", is_flag=True, help="Also evaluate every client's model on the test set after local training.")
@click.option("--out", type=click.Path(file_okay=False), default="checkpoints", show_default=True, help="Run store folder.")
@click.option("--keep-local", default="all", show_default=True, help="Client checkpoints to keep: all, last, none, every:N")
@click.option("--preset", default="paper", show_default=True, help="paper (Sec. 5.1 settings) or quick (2 short rounds).")
@click.option("--config", type=click.Path(dir_okay=False), default=None, help="YAML/TOML/JSON file of options; flags override it.")
@click.option("--tag", default="", help="Suffix for the run folder names.")
@click.option("--overwrite", is_flag=True, help="Retrain runs that are already complete (or unfinished) from scratch.")
@click.option("--resume", is_flag=True, help="Continue unfinished runs from their last complete round (bit-identical on CPU).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary of the runs on stdout.")
@click.pass_context
def train(ctx, **params):
    """Train FedAvg (+ regularizer) runs and store per-round global and client checkpoints.

    With no options: digits, 10 clients, alpha in {0.01, 0.05, 0.25, inf}, into ./checkpoints.
    """
    from tqdm import tqdm

    from .fl.engine import prepare, total_steps, train as train_run

    from .fl.engine import STOP, Interrupted, check_disk

    if params["resume"] and params["overwrite"]:
        raise CollapseLabError("--resume and --overwrite contradict each other; choose one")
    configs = build_configs(ctx, params)
    prepared = prepare(configs, Path(params["out"]), overwrite=params["overwrite"], resume=params["resume"])
    todo = [p for p in prepared if p.action in ("train", "resume")]
    check_disk(prepared, Path(params["out"]))
    for note in dict.fromkeys(n for p in todo for n in p.notes):
        click.echo(f"note: {note}", err=True)
    for p in prepared:
        if p.action == "skip":
            click.echo(f"{p.path}: already complete with this configuration (--overwrite to retrain)", err=True)
    steps = sum(total_steps(p) for p in todo)
    summaries = []
    t0 = time.time()
    # disable=None: the bar shows on a terminal and stays out of logs
    old_handlers = _install_stop_handlers(STOP)
    try:
        with tqdm(total=steps, unit="step", desc="train", file=sys.stderr, dynamic_ncols=True,
                  disable=None, mininterval=0.5) as bar:
            for p in todo:
                bar.set_postfix_str(p.path.name)
                summaries.append({**train_run(p, on_step=lambda: bar.update(1)), "alpha": alpha_str(p.config.alpha),
                                  "seed": p.config.seed, "resumed_from": p.start})
    except Interrupted as e:
        cmd = " ".join(shlex.quote(a) for a in ["collapse-lab", *sys.argv[1:]] if a != "--overwrite")
        if "--resume" not in sys.argv:
            cmd += " --resume"
        where = f"after client {e.client}" if e.client is not None else "before storing any client"
        click.echo(f"{e.signame}: stopped {e.path.name} in round {e.round} {where}; rounds up to "
                   f"{e.round - 1} are stored. Continue with: {cmd}", err=True)
        ctx.exit(130 if e.signame == "SIGINT" else 143)
    finally:
        _restore_handlers(old_handlers)
        STOP.requested = None
    for p in prepared:
        if p.action == "skip":
            summaries.append({"run": str(p.path), "status": "skipped (complete)", "alpha": alpha_str(p.config.alpha),
                              "seed": p.config.seed})
    if params["as_json"]:
        click.echo(json.dumps({"runs": summaries, "seconds": round(time.time() - t0, 2)}, indent=2))
    else:
        for s in summaries:
            acc = f"test acc {s['final_test_acc']:.4f}" if "final_test_acc" in s else s["status"]
            click.echo(f"{s['run']}: {acc}")
        click.echo(f"{len(todo)} run(s) trained in {time.time() - t0:.1f} s")


def _install_stop_handlers(stop) -> dict:
    """SIGINT/SIGTERM finish the current client, then stop with a resume hint; a second
    Ctrl-C stops at once."""
    def handler(signum, frame):
        if stop.requested:
            raise KeyboardInterrupt
        stop.requested = signal.Signals(signum).name
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


from .commands.spectrum import compare_cmd, spectrum_cmd  # noqa: E402

cli.add_command(spectrum_cmd)
cli.add_command(compare_cmd)

from .commands.theory import theory  # noqa: E402

cli.add_command(theory)

from .commands.bench import bench_cmd  # noqa: E402

cli.add_command(bench_cmd)


def main():
    cli(prog_name="collapse-lab")


if __name__ == "__main__":
    main()
