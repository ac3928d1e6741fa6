"""The documentation names only what exists: every ``collapse-lab COMMAND`` in README.md
and docs/ is a command (or a theory sub-command), every ``--option`` an option of some
command, every docs page the README links exists, and the README stays a page."""
from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from collapse_lab.bench import released_driver
from collapse_lab.cli import cli

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# options of other programs that the docs show next to ours (pip, pytest, Chromium, git, torchrun, ...)
OTHERS = {"--rewrite",  # collapse_lab/catalogue/check_specs.py, a script
          "--table", "--tests",  # docs/timings.py, a script
          "--no-deps", "--durations", "--dist", "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir", "--index-url",
          "--extra-index-url", "--upgrade", "--version", "--help", "--nproc-per-node", "--sample",
          "--time", "--array",  # sbatch (docs/training.md: a SLURM job array)
          "--gpus-per-node", "--signal", "--test-only", "--me",  # sbatch and squeue (docs/sweeps.md: SLURM)
          "--num-supernodes",  # flwr federation simulation-config (docs/flower.md)
          "--auto-precision"}  # the suite's own pytest option (tests/conftest.py; docs/plugins.md)
# collapse_lab/bench/released_driver.py, a script run in the released code's own environment
OTHERS |= {o for a in released_driver.parser()._actions for o in a.option_strings if o.startswith("--")}


def commands() -> dict[str, click.Command]:
    out = {}
    for name, cmd in cli.all_commands().items():
        out[name] = cmd
        for sub, c in getattr(cmd, "commands", {}).items():
            out[f"{name} {sub}"] = c
    return out


def all_options() -> set[str]:
    opts = set()
    for cmd in [cli, *commands().values()]:
        for p in cmd.params:
            if isinstance(p, click.Option):
                opts.update(o for o in (*p.opts, *p.secondary_opts) if o.startswith("--"))
    return opts


def code_of(markdown: str) -> str:
    """The fenced blocks and the `code spans`: where a command or an option is named."""
    fences = re.findall(r"```[^\n]*\n(.*?)```", markdown, flags=re.S)
    rest = re.sub(r"```.*?```", "", markdown, flags=re.S)
    return "\n".join(fences + re.findall(r"`([^`\n]+)`", rest))


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_command_and_option_named_in_the_docs_exists(page):
    text = code_of(page.read_text())
    cmds = commands()
    named = set(re.findall(r"collapse-lab ([a-z][a-z0-9]*(?: [a-z][a-z0-9]*)?)", text))
    unknown_cmds = sorted(n for n in named if n not in cmds and n.split()[0] not in cmds)
    assert not unknown_cmds, f"{page.name} names commands that do not exist: {unknown_cmds}"
    options = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*[a-z0-9])", text))
    unknown = sorted(options - all_options() - OTHERS)
    assert not unknown, f"{page.name} names options no command has: {unknown}"


def test_the_readme_is_a_page_that_links_the_docs():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 150
    links = re.findall(r"\]\((docs/[^)]+)\)", text)
    assert links and all((ROOT / link).exists() for link in links), links
    assert {p.name for p in (ROOT / "docs").glob("*.md")} <= {Path(link).name for link in links}
    for cmd in cli.list_commands(None):  # the command table lists every command
        assert f"`{cmd}" in text, cmd


def test_the_check_would_catch_a_wrong_name():
    assert "--no-such-option" not in all_options() and "--data-root" in all_options()
    assert "theory thm1" in commands() and "nosuch" not in commands()
