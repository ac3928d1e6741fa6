"""How a command that trains ends when Ctrl-C or SIGTERM stops it (``signals.SweepInterrupted``)."""
from __future__ import annotations

import click

from ..signals import exit_status


def training_stopped(command: str, signame: str, kept: str = "finished runs are kept") -> None:
    """Ctrl-C or SIGTERM stopped the runs a command trained (``signals.SweepInterrupted``):
    what is kept and the command that continues, one line; exit status 130 or 143."""
    from ..timelimit import continue_command

    click.echo(f"{command} interrupted ({signame}): {kept}, the runs under way stopped after their current client; "
               f"the same command continues: {continue_command()}", err=True)
    raise SystemExit(exit_status(signame))
