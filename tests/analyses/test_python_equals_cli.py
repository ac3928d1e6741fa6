"""One path: the figures and tables rendered by the Python functions (``actions.figures``)
are byte for byte the files ``collapse-lab figures``/``tables`` write for the same options:
images, numbers, claims and every table format."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from collapse_lab.cli import cli


@pytest.fixture(scope="module")
def smoke_store(tmp_path_factory):
    root = tmp_path_factory.mktemp("one-path")
    for cmd in (["figures", "feddecorr-fig2"], ["tables", "feddecorr-table10"]):
        res = CliRunner().invoke(cli, [*cmd, "--smoke", "--store", str(root / "st"), "--out", str(root / "first"),
                                       "--workers", "1"])
        assert res.exit_code == 0, res.output[-2000:]
    return root


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_python_and_the_command_line_write_the_same_bytes(smoke_store):
    from collapse_lab.actions.figures import figures, tables

    root, said = smoke_store, []
    figs = figures(["feddecorr-fig2"], smoke=True, store=root / "st", out=root / "py", train=False, say=said.append)
    tabs = tables(["feddecorr-table10"], smoke=True, store=root / "st", out=root / "py", train=False,
                  say=said.append)
    for cmd in (["figures", "feddecorr-fig2"], ["tables", "feddecorr-table10"]):
        res = CliRunner().invoke(cli, [*cmd, "--smoke", "--no-train", "--store", str(root / "st"),
                                       "--out", str(root / "cli")])
        assert res.exit_code == 0, res.output[-2000:]
    py, cl = _files(root / "py"), _files(root / "cli")
    kinds = {Path(name).suffix for name in py}
    assert {".png", ".pdf", ".json", ".md", ".csv", ".tex"} <= kinds, sorted(py)
    assert sorted(py) == sorted(cl)
    assert [name for name in py if py[name] != cl[name]] == []
    # the records returned are the files' numbers, and the calls trained nothing
    assert [r["entry"] for r in figs] == ["feddecorr-fig2"] and figs.failed_runs == [] and tabs.failed_runs == []
    assert figs.out == root / "py" and tabs.markdown[0] == (root / "py" / "feddecorr-table10.md").read_text()
