"""The SLURM options of ``sweep``, ``figures`` and ``tables`` (``--backend slurm``) on the
command line: the flags given reach the command's function as one argument, ``slurm_flags``
({flag: value}), which ``sweep.slurm_flags.given_slurm`` builds into ``SlurmOptions``."""
from __future__ import annotations

import functools

import click

from ..runspec.slurm_flags import FLAGS, HELP

NAMES = {flag: flag.lstrip("-").replace("-", "_") for flag in [*FLAGS, "--slurm-option"]}


def slurm_options(f):
    """The options, on a command: the ones given reach ``f`` as ``slurm_flags`` ({flag: value})."""
    @functools.wraps(f)
    def packed(*args, **kwargs):
        flags = {flag: kwargs.pop(name) for flag, name in NAMES.items()}
        given = {flag: (tuple(v) if flag == "--slurm-option" else v) for flag, v in flags.items()
                 if v is not None and v != ()}
        return f(*args, slurm_flags=given, **kwargs)

    packed = click.option("--slurm-option", "slurm_option", multiple=True, metavar="KEY=VALUE",
                          help="slurm: any other sbatch option, e.g. constraint=a100 or exclusive= "
                               "(repeatable).")(packed)
    for flag, (_, _, typ) in reversed(FLAGS.items()):
        packed = click.option(flag, NAMES[flag], type=typ, default=None, help=HELP[flag])(packed)
    return packed
