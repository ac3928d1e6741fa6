"""The training options' checks as library functions (``runspec.backend``): from Python they
refuse what the command line refuses, with the same line, and let a valid set through."""
from __future__ import annotations

import pytest

from collapse_lab.errors import CollapseLabError
from collapse_lab.runspec.backend import check_catalogue, check_sweep
from tests.fixtures import invoke

SWEEP = dict(backend="local", workers=None, address=None, cpus_per_run=1, gpus_per_run=0.0, stack=1, dry_run=False,
             max_runs=10_000, wait=False, status=False, time_limit=None)


@pytest.mark.parametrize("args, given", [
    (["--workers", "0"], {"workers": 0}),
    (["--stack", "0"], {"stack": 0}),
    (["--max-runs", "0"], {"max_runs": 0}),
    (["--cpus-per-run", "2"], {"cpus_per_run": 2}),
    (["--wait"], {"wait": True}),
    (["--status", "--dry-run"], {"status": True, "dry_run": True}),
    (["--backend", "ray", "--workers", "2"], {"backend": "ray", "workers": 2}),
])
def test_sweep_checks_from_python_are_the_commands(tmp_path, args, given):
    spec = tmp_path / "s.yaml"
    spec.write_text("base: {rounds: 1}\n")
    with pytest.raises(CollapseLabError) as e:
        check_sweep(**{**SWEEP, **given})
    r = invoke("sweep", spec, "--store", tmp_path / "st", *args)
    assert r.exit_code == 2 and r.output.strip() == f"error: {e.value}", r.output
    assert not (tmp_path / "st").exists()


def test_a_valid_set_passes_from_python_and_on_the_command_line(tmp_path):
    """The valid sets pass the checks (they return, raising nothing), and the command line
    with the same valid options goes past them: a dry-run plans the spec's four runs."""
    assert check_sweep(**SWEEP) is None
    assert check_sweep(**{**SWEEP, "workers": 2, "dry_run": True}) is None
    for args in ((None, 8), (None, 8, "local", None, True), (None, 8, "local", None, False, True), (2, 1)):
        assert check_catalogue(*args) is None
    spec = tmp_path / "s.yaml"
    spec.write_text("base: {rounds: 1}\n")
    r = invoke("sweep", spec, "--store", tmp_path / "st", "--workers", "2", "--dry-run")
    assert r.exit_code == 0 and r.output.count(" missing\n") == 4, r.output  # the default four alphas, none trained
    assert not (tmp_path / "st").exists()  # a dry-run writes nothing


@pytest.mark.parametrize("args, given", [
    (["--list", "--no-train"], dict(list_=True, no_train=True)),
    (["--list", "--json", "--dry-run"], dict(list_=True, **{"--dry-run": True})),
    (["--no-train", "--workers", "2"], dict(no_train=True, workers=2)),
    (["--address", "auto"], dict(address="auto")),
])
def test_catalogue_checks_from_python_are_the_figures_commands(tmp_path, args, given):
    with pytest.raises(CollapseLabError) as e:
        check_catalogue(**{"workers": None, "stack": 8, **given})
    r = invoke("figures", "feddecorr-fig2", "--store", tmp_path / "st", "--out", tmp_path / "f", *args)
    assert r.exit_code == 2 and r.output.strip() == f"error: {e.value}", r.output
    assert not (tmp_path / "st").exists() and not (tmp_path / "f").exists()


@pytest.mark.parametrize("args, given", [
    (["--no-train", "--dry-run"], dict(no_train=True, dry_run=True)),
    (["--no-train", "--rung", "cpu"], dict(no_train=True, only=("cpu",))),
    (["--rung", "nope"], dict(only=("nope",))),
    (["--stack", "0"], dict(stack=0)),
    (["--other-sample", "NOWHERE"], dict(other_sample="NOWHERE")),
])
def test_ladder_checks_from_python_are_the_ladders(tmp_path, monkeypatch, args, given):
    from collapse_lab.catalogue.ladder_checks import check_ladder

    monkeypatch.chdir(tmp_path)
    with pytest.raises(CollapseLabError) as e:
        check_ladder(["feddecorr-fig2"], "cpu", "rungs", **given)
    r = invoke("ladder", "feddecorr-fig2", "--store", tmp_path / "st", "--out", tmp_path / "o", *args)
    assert r.exit_code == 2 and r.output.strip() == f"error: {e.value}", r.output
    assert not (tmp_path / "st").exists() and not (tmp_path / "o").exists()


def test_a_valid_ladder_gives_its_entries_and_rungs():
    from collapse_lab.catalogue.ladder_checks import check_ladder

    entries, rungs = check_ladder(["feddecorr-fig2"], "cpu", "rungs", only=("cpu",))
    assert [e.name for e in entries] == ["feddecorr-fig2"] and "cpu" in [g.name for g in rungs]


@pytest.mark.parametrize("args, call", [
    (["--model", " , "], lambda c: c.models_of(" , ")),
    (["--images", "0"], lambda c: c.check_counts(images=0)),
    (["--repeats", "0"], lambda c: c.check_counts(repeats=0)),
    (["--warmup", "-1"], lambda c: c.check_counts(warmup=-1)),
    (["--sweep", "--sweep-seeds", "0"], lambda c: c.check_sweep_counts(0)),
])
def test_bench_checks_from_python_are_the_benchs(args, call):
    from collapse_lab.bench import checks

    with pytest.raises(CollapseLabError) as e:
        call(checks)
    r = invoke("bench", *args)
    assert r.exit_code == 2 and r.output.strip() == f"error: {e.value}", r.output
