"""The options of a training run on the command line, built from their one table
(``runspec.flags``): ``train`` declares them all, ``bench`` the speed options it shares."""
from __future__ import annotations

import click

from ..runspec.flags import FLAG, FLAGS, KEY_VALUE, SWITCH, field_of, registry


class PluginOption(click.Option):
    """An option whose help ends with the names its registry holds (found when help is shown)."""

    def __init__(self, *args, registry: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.registry = registry

    def get_help_record(self, ctx):
        base = self.help
        self.help = f"{base} One of: {registry(self.registry).help()}."
        try:
            return super().get_help_record(ctx)
        finally:
            self.help = base


def run_option(flag: str):
    """The click option of one flag of the run's table."""
    kind, multiple, plugin, help = FLAGS[flag]
    if kind == SWITCH:
        return click.option(f"{flag}/--no-{flag[2:]}", field_of(flag), default=None, help=help)
    extra = {"cls": PluginOption, "registry": plugin} if plugin else {}
    typed = ({"is_flag": True} if kind == FLAG else {"metavar": KEY_VALUE} if kind == KEY_VALUE
             else {"type": kind} if kind is not str else {})
    return click.option(flag, field_of(flag), multiple=multiple, help=help, **typed, **extra)


def run_options(f):
    """Every option of the run's table, in its order."""
    for flag in reversed(FLAGS):
        f = run_option(flag)(f)
    return f
