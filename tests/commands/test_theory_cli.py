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
    assert out["verdict"]["met"] is (errs[-1] < out["verdict"]["tolerance"])  # the verdict line's rule


def test_theory_bad_input(tmp_path):
    for args, msg in ((["thm1", "--depth", "1"], "--depth must be >= 2"),
                      (["thm1", "--alpha", "0"], "--alpha must be > 0"),
                      (["align", "--width", "100"], "exceeds the input dimension")):
        res = CliRunner().invoke(cli, ["theory", *args, "--out", str(tmp_path)])
        assert res.exit_code == 2 and msg in res.stderr, res.output


def test_thm1_verdict_by_hand():
    """Met: the error at the smallest step under the tolerance and shrinking as the step halves."""
    from collapse_lab.analysis.theory.thm1 import EQ40_TOLERANCE, thm1_verdict

    study = lambda *errs: [{"eta": 0.1 / 2 ** i, "max_eq40_rel": e} for i, e in enumerate(errs)]  # noqa: E731
    assert thm1_verdict(study(4e-3, 2e-3, 1e-3))["met"] is True
    v = thm1_verdict(study(4e-3, 5e-3, 1e-3))
    assert v["met"] is False and not v["shrinks_with_the_step"] and v["line"].endswith("NOT met")
    assert thm1_verdict(study(0.4, 0.2, 2 * EQ40_TOLERANCE))["met"] is False
    assert "tolerance 0.01" in thm1_verdict(study(4e-3, 2e-3, 1e-3))["line"]
