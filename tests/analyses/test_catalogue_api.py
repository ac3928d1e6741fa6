"""The catalogue as a library: a figure rendered from Python, with no command line and no
click context, is the one ``collapse-lab figures`` renders (the same values, claims and
verdicts), and its claims file is written."""
from __future__ import annotations

import json

import click
from click.testing import CliRunner

from collapse_lab.cli import cli


def test_a_figure_rendered_from_python_equals_the_commands(store, tmp_path):
    from collapse_lab.actions.figures import figures

    said = []
    (rec,) = figures(["fednc-fig3"], store=store, out=tmp_path / "py", say=said.append)
    assert click.get_current_context(silent=True) is None  # no command ran
    assert rec["entry"] == "fednc-fig3" and "error" not in rec, rec
    assert (tmp_path / "py" / "fednc-fig3.png").stat().st_size > 1000
    assert any(s.startswith("figures: fednc-fig3 -> ") for s in said)
    res = CliRunner().invoke(cli, ["figures", "fednc-fig3", "--store", str(store), "--out", str(tmp_path / "cli")])
    assert res.exit_code == 0, res.output
    py, cl = (json.loads((tmp_path / d / "fednc-fig3.json").read_text()) for d in ("py", "cli"))
    assert py == cl and py["claims"] and rec["claims"] == py["claims"]
    assert (tmp_path / "py" / "CLAIMS-quick.md").read_text() == (tmp_path / "cli" / "CLAIMS-quick.md").read_text()


def test_an_unknown_entry_from_python_is_the_commands_error(store, tmp_path):
    import pytest

    from collapse_lab.actions.figures import figures
    from collapse_lab.errors import CollapseLabError

    with pytest.raises(CollapseLabError, match="unknown figure 'nope'"):
        figures(["nope"], store=store, out=tmp_path)
    assert not any(tmp_path.iterdir())
