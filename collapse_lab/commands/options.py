"""Options several commands share, each declared once here; a command gives its own help
where the option means something particular to it (``--store`` on Ray: a folder every node
sees)."""
from __future__ import annotations

import click

from ..spectra.constants import DEFAULT_TAU
from .common import data_root_option, model_factory_options

STORE = "checkpoints"  # the run store every command reads and writes by default
PRESETS = ("quick", "cpu", "paper")  # the catalogue's presets (analysis.catalogue.PRESETS)


PRECISIONS = ("auto", "fp32", "bf16")

# one declaration for train, sweep's catalogue commands (figures, tables, ladder) and bench:
# the precision the runs train in, part of a run's identity (bf16 runs are other runs)
precision_option = click.option(
    "--precision", type=click.Choice(PRECISIONS), default=None,
    help="Training precision of the runs: auto (the default: bf16 autocast on CUDA, fp32 on every CPU), fp32, or bf16 "
         "(autocast; on a CPU faster only with AVX512-BF16 or AMX). bf16 runs are other runs than fp32 ones (their "
         "names differ); a stored run asked for without --precision keeps the precision it trained in.")


# one declaration each, one meaning everywhere
json_option = click.option("--json", "as_json", is_flag=True,
                           help="Print what the command computes as JSON on stdout (its progress lines stay on stderr).")
device_option = click.option("--device", default="auto", show_default=True,
                             help="auto (CUDA when present), cpu, cuda or cuda:N.")


def store_option(help: str = "Run store.", name: str = "store"):
    return click.option("--store", name, default=STORE, show_default=True, type=click.Path(file_okay=False), help=help)


def preset_option(default: str, help: str):
    return click.option("--preset", type=click.Choice(PRESETS), default=default, show_default=True, help=help)


def rounds_option(what: str):
    """--rounds of the analyses: which stored rounds to read (train's and bench's --rounds count
    rounds to run; a selection is never a count)."""
    return click.option("--rounds", "rounds_spec", default=None, metavar="ROUNDS",
                        help=f"Rounds to read: all, A:B or A,B,C; {what}")


def tau_option():
    return click.option("--tau", type=float, default=DEFAULT_TAU, show_default=True,
                        help="Significance threshold on sigma_k (the papers' log tau = -2).")


def top_option():
    return click.option("--top", type=int, default=None,
                        help="Indices used for R (default: all above the numerical floor).")


def backend_option(help: str):
    return click.option("--backend", type=click.Choice(["local", "ray", "slurm"]), default="local", show_default=True,
                        help=help)


def workers_option(help: str = "local: training processes (default: the cores)."):
    return click.option("--workers", type=int, default=None, help=help)


def stack_option(default: int, help: str = "Runs trained together as one stacked model (see `sweep --stack`); 1: each "
                                           "on its own."):
    return click.option("--stack", type=int, default=default, show_default=True, help=help)


def address_option(help: str = "ray: auto or HOST:PORT of a running cluster."):
    return click.option("--address", default=None, help=help)


def analysis_options(f=None, *, foreign_layer: bool = True):
    """The options of the commands that analyse stored runs; ``foreign_layer=False`` leaves
    out --layer (the representation's module of a model from elsewhere), for a command whose
    --layer means something else (``layers``)."""
    if f is None:
        return lambda g: analysis_options(g, foreign_layer=foreign_layer)
    opts = [
        click.option("--alpha", multiple=True, help="Dirichlet alpha of the runs (repeatable; default: all runs found)."),
        click.option("--run", "runs", multiple=True, type=click.Path(file_okay=False), help="Run folder(s) to use instead of searching."),
        store_option("Run store to search."),
        click.option("--dataset", default=None, help="Only runs on this data set."),
        click.option("--model", default=None, help="Only runs of this model."),
        click.option("--method", "methods", multiple=True, help="Only runs of this method (repeatable)."),
        click.option("--reg", "regs", multiple=True, help="Only runs with this regularizer (repeatable)."),
        click.option("--round", "round_", type=int, default=None, help="Round to analyse (default: the last)."),
        click.option("--client", type=int, default=0, show_default=True,
                     help="Client whose local model is shown (runs that keep no client checkpoint: global only)."),
        tau_option(),
        click.option("--split", default="test", show_default=True, help="Evaluation set: test (as in the paper) or train."),
        click.option("--feature-dtype", default="float64", show_default=True, help="Forward pass precision for z."),
        device_option,
        click.option("--out", "fig_dir", default="figures", show_default=True, type=click.Path(file_okay=False),
                     callback=writable_out, help="Figure folder."),
        json_option,
        data_root_option,
        *(model_factory_options if foreign_layer else model_factory_options[:1]),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def writable_out(ctx, param, value):
    """--out (a folder), or a file option's folder (``dir_okay=False``: report's --html), checked
    writable when the command parses, before any work: a read-only or misplaced target is one
    line, exit 2, naming the option."""
    if value is None or ctx.resilient_parsing:
        return value
    from pathlib import Path

    from ..store.paths import check_output_folder

    folder = value if param.type.dir_okay else str(Path(value).parent)
    check_output_folder(folder, param.opts[0])
    return value


pilot_option = click.option(
    "--pilot", "pilot_s", type=float, default=None,
    help="With --dry-run: time SECONDS of training steps of each model here, now (at the threads and workers the runs "
         "will use), and give the time on this machine as a range beside the idle-machine estimate.")
