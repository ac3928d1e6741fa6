"""An option's name means one thing on every command: the same name is parsed with the same
type everywhere (how many values it takes may differ: a filter takes several, a run one).
A name that once meant two things (``--rounds``: a count for train, a selection for the
analyses; ``--client``: a client for the analyses, a file pattern for import) now has two
names, and this test keeps it so."""
from __future__ import annotations

import collections

import click
import pytest

from .test_help import ALL

# Names whose declarations differ in type, each with why it is still one meaning.
SAME_MEANING = {
    # the scale presets paper, cpu and quick; train checks its value in the resolver, where a
    # configuration file's preset gets the same check
    "--preset": {"choice", "text"},
}


def declarations() -> dict[str, dict[str, list[str]]]:
    """Long option name -> parameter type name -> the commands that declare it so (hidden
    options left out: they only point an old spelling to the new one)."""
    seen: dict[str, dict[str, list[str]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    for path, cmd in ALL:
        for p in cmd.params:
            if isinstance(p, click.Option) and not p.hidden:
                for name in p.opts:
                    if name.startswith("--"):
                        seen[name][p.type.name].append(" ".join(path))
    return seen


def test_each_option_name_has_one_type_on_every_command():
    differ = {name: dict(kinds) for name, kinds in declarations().items()
              if len(kinds) > 1 and set(kinds) != SAME_MEANING.get(name)}
    assert not differ, differ


def test_a_count_and_a_selection_have_different_names():
    seen = declarations()
    assert set(seen["--rounds"]) == {"integer"}, dict(seen["--rounds"])  # rounds to run: train, bench
    assert sorted(seen["--over-rounds"]["text"]) == ["cka", "layers", "nc", "spectrum"]
    assert set(seen["--client"]) == {"integer"} and seen["--client-files"]["text"] == ["import"]


def test_the_check_catches_a_second_meaning():
    """A command that declared --rounds as a selection again would be caught."""
    ALL.append((("extra",), click.Command("extra", params=[click.Option(["--rounds"], default=None)])))
    try:
        with pytest.raises(AssertionError, match="--rounds"):
            test_each_option_name_has_one_type_on_every_command()
    finally:
        ALL.pop()
