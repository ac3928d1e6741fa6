"""Every command's --help renders, and the one-line descriptions in a group's listing are
whole sentences (click cuts a docstring at its first '. ', e.g. after "Fig.")."""
from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from collapse_lab.cli import cli


def commands(group: click.Group, path=()):
    for name, cmd in group.commands.items():
        yield (*path, name), cmd
        if isinstance(cmd, click.Group):
            yield from commands(cmd, (*path, name))


ALL = [((), cli), *commands(cli)]


@pytest.mark.parametrize("path,cmd", ALL, ids=[" ".join(p) or "collapse-lab" for p, _ in ALL])
def test_help_renders_and_lists_whole_sentences(path, cmd):
    res = CliRunner().invoke(cli, [*path, "--help"], terminal_width=100)
    assert res.exit_code == 0, res.output
    if isinstance(cmd, click.Group):
        listing = res.output.split("Commands:", 1)[1]
        for name, sub in cmd.commands.items():
            line = next(ln for ln in listing.splitlines() if ln.strip().startswith(name + " "))
            shown = " ".join(line.split()[1:])
            assert sub.short_help and shown == sub.short_help, (name, shown)  # not cut by click
            assert shown.endswith(".") and not shown.endswith("..."), shown
