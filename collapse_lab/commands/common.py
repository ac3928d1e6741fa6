"""Options several commands share and that only set where things are read from. Each
arrives as an argument of the command's function, which passes it down to its action
(``actions``: the data root, the model factory and layer of a model from elsewhere). Nothing
is kept in a module or in click's context."""
from __future__ import annotations

import sys
import time

import click

from ..data_root import check_data_root

def checked_data_root(value: str | None, check: bool = True) -> str | None:
    """The command's ``--data-root`` (None: not given); a folder that is not there is one line
    (exit 2). ``check=False``: as given (``train``: the resolver says first when the data set
    reads no files, then the loader names a missing folder)."""
    return value if value is None or not check else check_data_root(value)


# Declared once, for every command (train, sweep, the catalogue, the analyses, theory,
# bench), with one meaning: where the data sets' files are; not part of a run's identity
# (the same run reads its files wherever they are).
data_root_option = click.option(
    "--data-root", "data_root", type=click.Path(file_okay=False), default=None,
    help="Folder holding the data sets' standard layouts (cifar-10-batches-py/, cifar-100-python/, "
         "tiny-imagenet-200/, ...): where runs train from, and where a stored run that records none is read "
         "from; default $COLLAPSE_LAB_DATA, then data_root in ~/.config/collapse-lab/config.toml.")


def _foreign(ctx, param, value):
    from ..analysis.features.hooks import load_factory

    if param.name == "layer" and value is not None and not value.strip():
        from ..errors import CollapseLabError

        raise CollapseLabError("--layer is empty; name a module (model.named_modules()) or leave --layer out for the "
                               "input of the last linear layer")
    if value is not None and param.name == "model_factory":
        load_factory(value)  # a factory that cannot be imported is one line before any work
    return value


# the model of a store written outside collapse-lab: named by the user here, never imported
# because a store names it (importing code a file names is the user's decision)
model_factory_options = [
    click.option("--model-factory", "model_factory", callback=_foreign, metavar="MODULE:FUNCTION",
                 help="Build the runs' model with this function (for stores written outside collapse-lab; called "
                      "with num_classes and input_shape where it takes them)."),
    click.option("--layer", "layer", callback=_foreign, metavar="NAME",
                 help="The module whose output is the representation (default: the input of the last linear layer)."),
]


class Progress:
    """One line per unit of work on stderr ("cka: run 2/4 NAME (3.1 s)"): long commands say
    where they are on a terminal and in logs alike; stdout stays for the JSON."""

    def __init__(self, what: str, total: int):
        self.what, self.total, self.done, self.t0 = what, total, 0, time.time()

    def step(self, label: str) -> None:
        self.done += 1
        click.echo(f"{self.what}: {self.done}/{self.total} {label} ({time.time() - self.t0:.1f} s)", err=True)
        sys.stderr.flush()


def progress_callback(what: str):
    """``done(label, total)`` for a library function's progress: a ``Progress`` line each call."""
    made: dict = {}

    def done(label: str, total: int) -> None:
        made.setdefault("p", Progress(what, total)).step(label)

    return done


def _limit(ctx, param, value):
    if value is not None:
        from ..timelimit import parse_duration

        parse_duration(value)  # a bad duration is one line before anything runs
    return value


time_limit_option = click.option(
    "--time-limit", metavar="DURATION", callback=_limit,
    help="Stop cleanly after the last round that fits in DURATION (3h50m, 90m, 3600) from the command's start, "
         "keep every complete round, exit 75 and print the command that continues. With --backend slurm: each "
         "job's training time (default: --slurm-time less a margin); a job stopped by it requeues itself.")
