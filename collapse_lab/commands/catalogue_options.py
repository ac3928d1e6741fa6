"""The options ``figures`` and ``tables`` share, declared once: what to render, where, and
how the missing runs train (with SLURM's options, ``slurm_options``)."""
from __future__ import annotations

import click

from .common import data_root_option, time_limit_option
from .options import json_option, precision_option
from .options import (address_option, backend_option, pilot_option, preset_option, stack_option, store_option,
                      workers_option)
from .overrides import set_option


def catalogue_options(out_default: str, out_help: str, list_help: str):
    """The options ``figures`` and ``tables`` share: what to render, where, and how the
    missing runs train."""
    opts = [
        click.argument("names", nargs=-1),
        preset_option("quick", help="quick: stand-in data (digits, Gaussian), minutes on a CPU; cpu: real CIFAR-10 (1,000 or 300 "
                          "training images per class, chosen by content) with small models, under 30 minutes an entry on 2 cores, for the entries "
                          "that have it; paper: the papers' settings (a GPU and the data sets)."),
        store_option(),
        click.option("--out", default=out_default, show_default=True, type=click.Path(file_okay=False), help=out_help),
        click.option("--list", "list_", is_flag=True, help=list_help),
        click.option("--no-train", is_flag=True, help="Render from the runs present; an entry missing runs is reported."),
        backend_option("Where missing runs train: local processes, a Ray cluster, or one SLURM job each (the command "
                       "waits for them, then renders; docs/sweeps.md)."),
        workers_option(),
        stack_option(8),
        address_option(),
        json_option,
        click.option("--dry-run", "dry_run_", is_flag=True, help="Train and render nothing: per preset, the runs, their checkpoint "
                     "volume and the compute time per device class, estimated from the project's measurements."),
        click.option("--keep", type=click.Choice(["read", "all"]), default="read", show_default=True,
                     help="Checkpoints each run keeps: read = what the entries that read it read (most: the last round's "
                          "global model; the last round's clients where local models are read), all = every round's "
                          "global and client models (for your own analyses; many times the bytes, see --dry-run)."),
        click.option("--smoke", is_flag=True, help="Prove the path without a GPU: every run of the entries at --preset, "
                     "cut to one round of a few local steps on a data subset, in a store of its own "
                     "(default checkpoints-smoke); outputs marked smoke, claims not checked."),
        pilot_option,
        time_limit_option,
        data_root_option,
        precision_option,
        set_option,
    ]

    def deco(f):
        from .slurm_options import slurm_options

        f = slurm_options(f)
        for o in reversed(opts):
            f = o(f)
        return f

    return deco
