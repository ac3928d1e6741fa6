"""Every command's --help renders, and the one-line descriptions in a group's listing are
whole sentences (click cuts a docstring at its first '. ', e.g. after "Fig.")."""
from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from collapse_lab.cli import cli


def commands(group: click.Group, path=()):
    every = group.all_commands() if hasattr(group, "all_commands") else group.commands
    for name, cmd in every.items():
        yield (*path, name), cmd
        if isinstance(cmd, click.Group):
            yield from commands(cmd, (*path, name))


ALL = [((), cli), *commands(cli)]


@pytest.mark.parametrize("path,cmd", ALL, ids=[" ".join(p) or "collapse-lab" for p, _ in ALL])
def test_help_renders_and_lists_whole_sentences(path, cmd):
    res = CliRunner().invoke(cli, [*path, "--help"], terminal_width=100)
    assert res.exit_code == 0, res.output
    # the usage line names the command, and every option it declares is listed (a renamed,
    # dropped or mis-declared option, or a help text cut off, shows here)
    assert res.output.startswith(f"Usage: {' '.join(('cli', *path))} "), res.output[:80]
    for p in cmd.params:
        if isinstance(p, click.Option) and not p.hidden:
            assert any(o in res.output for o in p.opts), (path, p.opts)
    if cmd.help:
        first = cmd.help.split("\n")[0].split()[:3]
        assert " ".join(first) in " ".join(res.output.split()), (path, first)
    if isinstance(cmd, click.Group):
        listing = res.output.split("Commands:", 1)[1]
        every = cmd.all_commands() if hasattr(cmd, "all_commands") else cmd.commands
        for name, sub in every.items():
            line = next(ln for ln in listing.splitlines() if ln.strip().startswith(name + " "))
            shown = " ".join(line.split()[1:])
            assert sub.short_help and shown == sub.short_help, (name, shown)  # not cut by click
            assert shown.endswith(".") and not shown.endswith("..."), shown


def test_top_level_help_loads_neither_torch_nor_numpy():
    """``collapse-lab --help`` lists every command from its declared line, importing none."""
    import subprocess
    import sys

    code = ("import sys; from collapse_lab.cli import cli; cli.main(['--help'], standalone_mode=False); "
            "print('LOADED', sorted(m for m in ('torch', 'numpy', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "LOADED []" in out, out
    assert all(f"  {name} " in out for name in cli.list_commands(None)), out


@pytest.mark.parametrize("path", [[], ["theory"]])
def test_a_group_called_alone_prints_its_help(path):
    res = CliRunner().invoke(cli, path, terminal_width=100, prog_name="collapse-lab")
    assert res.exit_code == 0, res.output
    assert res.output.startswith("Usage: collapse-lab") and "\nCommands:\n" in res.output
    assert "error:" not in res.output
