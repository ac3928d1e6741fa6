"""Where the data are: the command's --data-root, then $COLLAPSE_LAB_DATA, then data_root in
the user config file; never part of a run's identity; missing data named before training."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from collapse_lab import data_root as D
from collapse_lab.cli import cli
from collapse_lab.errors import CollapseLabError
from collapse_lab.runspec.resolve import resolve_runs


@pytest.fixture(autouse=True)
def clean(monkeypatch, tmp_path):
    monkeypatch.delenv(D.ENV, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def test_precedence_flag_then_environment_then_user_config(tmp_path, monkeypatch):
    a, b, c = (tmp_path / n for n in "abc")
    for p in (a, b, c):
        p.mkdir()
    assert D.default_data_root()[0] is None
    D.user_config_file().parent.mkdir(parents=True)
    D.user_config_file().write_text(f'data_root = "{c}"\n')
    assert D.default_data_root()[0] == str(c)
    monkeypatch.setenv(D.ENV, str(b))
    assert D.default_data_root() == (str(b), "$COLLAPSE_LAB_DATA")
    assert D.default_data_root(str(a)) == (str(a), "--data-root")
    assert D.default_data_root() == (str(b), "$COLLAPSE_LAB_DATA")  # nothing remembered from the call before
    with pytest.raises(CollapseLabError, match="is not a folder"):
        D.check_data_root(str(tmp_path / "nope"))


def test_the_data_root_reaches_runs_that_read_files_and_is_not_part_of_their_identity(tmp_path, monkeypatch):
    (before,) = resolve_runs({"dataset": "cifar10", "alpha": ["0.5"]}, data="if-present")
    monkeypatch.setenv(D.ENV, str(tmp_path))
    (after,) = resolve_runs({"dataset": "cifar10", "alpha": ["0.5"]}, data="if-present")
    assert before.data_root is None and after.data_root == str(tmp_path)
    assert before.run_name() == after.run_name()
    (digits,) = resolve_runs({"alpha": ["0.5"]})  # digits reads no files: left alone, no error
    assert digits.data_root is None


def test_missing_data_sets_are_named_before_anything_trains(tmp_path):
    res = CliRunner().invoke(cli, ["figures", "feddecorr-fig2", "--preset", "paper", "--store", str(tmp_path / "ck"),
                                   "--out", str(tmp_path / "fig"), "--data-root", str(tmp_path)])
    assert res.exit_code == 1, res.output
    lines = [ln for ln in res.stderr.splitlines() if "is missing:" in ln]
    assert len(lines) == 1 and "data set cifar100" in lines[0] and "cifar-100-python/" in lines[0]
    assert f"(looked in: {tmp_path})" in lines[0] or "looked in: --data-root" in lines[0]
    assert not any(p.name.startswith("cifar100") for p in (tmp_path / "ck").glob("*"))
    # the entry says the data are what it lacks, not that `figures` would train its runs
    (why,) = [ln for ln in res.stderr.splitlines() if "feddecorr-fig2: not rendered" in ln]
    assert "data set cifar100 is missing" in why and "give --data-root" in why and "trains it" not in why
