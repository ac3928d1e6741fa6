"""Options several commands share, each declared once here; a command gives its own help
where the option means something particular to it (``--store`` on Ray: a folder every node
sees)."""
from __future__ import annotations

import click


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


# the folder the analyses (spectrum, compare, layers, cka, nc, theory) draw their figures into
figure_out_option = click.option("--out", "fig_dir", default="figures", show_default=True,
                                 type=click.Path(file_okay=False), callback=writable_out, help="Figure folder.")
