"""theory prop1 / thm1 / align through the CLI (small settings)."""
from __future__ import annotations

import json

import pytest

from click.testing import CliRunner

from collapse_lab.cli import cli


@pytest.mark.slow
def test_prop1_cli(store):
    res = CliRunner().invoke(cli, ["theory", "prop1", "--store", str(store), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["max_rel_error"] < 1e-10 and len(out["real"]) == 2 and len(out["random"]) >= 20


@pytest.mark.slow
def test_thm1_cli_small(tmp_path):
    res = CliRunner().invoke(cli, ["theory", "thm1", "--alpha", "0.01", "--alpha", "inf", "--width", "8",
                                   "--eta", "1e-3", "--horizon", "0.2", "--out", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    errs = [s["max_eq40_rel"] for s in out["step_study"]]
    assert errs[0] > errs[1] > errs[2]  # Eq. 40 error shrinks with the step
    a001, ainf = out["alphas"]
    assert a001["classes_present"] < ainf["classes_present"]
    assert a001["G_effective_rank_t0"] < ainf["G_effective_rank_t0"]
    assert len(out["figures"]) == 4


def test_theory_bad_input(tmp_path):
    for args, msg in ((["thm1", "--depth", "1"], "--depth must be >= 2"),
                      (["thm1", "--alpha", "0"], "--alpha must be > 0"),
                      (["align", "--width", "100"], "exceeds the input dimension")):
        res = CliRunner().invoke(cli, ["theory", *args, "--out", str(tmp_path)])
        assert res.exit_code == 2 and msg in res.stderr, res.output
