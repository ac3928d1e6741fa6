"""Bad input, damaged stores and divergence, as a user meets them through the CLI: one
line, the right exit status, nothing half-written; runs extended and replaced safely;
files that follow the umask."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.fixtures import invoke as run
from tests.fixtures import tiny_train_args

FAST = tiny_train_args(per_class=20, test_per_class=5, epochs=1, clients=3, device="cpu")




def one_line(res, code=2):
    assert res.exit_code == code, res.output
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "Traceback" not in res.output
    return res.stderr.strip()


def run_dir(out: Path) -> Path:
    (d,) = [p for p in out.iterdir() if (p / "run.json").is_file()]
    return d


def test_a_diverging_run_is_never_complete(tmp_path):
    out = tmp_path / "ck"
    res = run("train", "--lr", "50", "--alpha", "0.5", "--rounds", "3", "--store", out)
    assert res.exit_code == 1, res.output
    line = [ln for ln in res.stderr.splitlines() if ln.startswith("diverged:")]
    assert len(line) == 1 and "non-finite" in line[0] and "lower --lr (now 50)" in line[0]
    meta = json.loads((run_dir(out) / "run.json").read_text())
    assert meta["status"] == "diverged" and meta["rounds_complete"] < meta["diverged"]["round"]
    assert (run_dir(out) / "round_0" / "global.safetensors").is_file()  # what came before stays readable
    # resuming would diverge again; the analyses leave it out by name or refuse it
    assert "resuming would diverge again" in one_line(run("train", "--lr", "50", "--alpha", "0.5", "--rounds", "3",
                                                          "--store", out, "--resume"))
    assert "diverged" in one_line(run("spectrum", "--run", run_dir(out), "--out", tmp_path / "fig"))
    res = run("spectrum", "--store", out, "--out", tmp_path / "fig")
    assert res.exit_code == 2 and "left out" in res.stderr and "the trained ones diverged" in res.stderr
    assert not list(out.glob(".features/*"))  # no NaN features cached


@pytest.mark.parametrize("text,msg", [
    ("rounds: three\n", "--rounds 'three' is not a whole number"),
    ("rounds: 1.7\n", "--rounds 1.7 is not a whole number"),
    ("lr: fast\n", "--lr 'fast' is not a number"),
    ("lr: .inf\n", "--lr inf is not finite"),
    ("local_eval: 3\n", "--local-eval 3 is not true or false"),
    ("method_options: 5\n", "--method-options 5 is not a mapping"),
    ("seeds: [0, -1]\n", "--seed must be >= 0"),
    ("seeds: [0, 0.5]\n", "--seed 0.5 is not a whole number"),
    ("partition: pathological\nalphas: [0.1]\n", "--alpha has no effect with --partition pathological"),
    ("colour: red\n", "unknown option(s) colour"),
])
def test_config_file_values_are_typed_and_checked(tmp_path, text, msg):
    f = tmp_path / "c.yaml"
    f.write_text(text)
    line = one_line(run("train", "--config", f, "--store", tmp_path / "ck"))
    assert msg in line
    if " is not " in msg:  # a type error names the file it came from
        assert str(f) in line
    assert not (tmp_path / "ck").exists()


@pytest.mark.slow
def test_a_corrupt_run_json_among_good_runs(tmp_path):
    out = tmp_path / "ck"
    assert run("train", *FAST, "--alpha", "0.5", "--alpha", "inf", "--rounds", "1", "--store", out).exit_code == 0
    bad = sorted(p for p in out.iterdir() if not p.name.startswith("."))[0]
    (bad / "run.json").write_text("{ not json")
    res = run("spectrum", "--store", out, "--out", tmp_path / "fig", "--json")
    assert res.exit_code == 0, res.output
    assert f"skipped: {bad / 'run.json'} is unreadable" in res.stderr
    assert len({e["run"] for e in json.loads(res.stdout)["spectra"]}) == 1  # the other run still works
    res = run("theory", "prop1", "--store", out, "--json")
    assert res.exit_code == 0 and "skipped:" in res.stderr
    # train names it; --overwrite replaces it after saying so
    args = ["train", *FAST, "--alpha", "0.5", "--alpha", "inf", "--rounds", "1", "--store", out]
    assert "run.json is unreadable" in one_line(run(*args))
    res = run(*args, "--overwrite")
    assert res.exit_code == 0 and f"note: --overwrite replaces {bad} (its run.json is unreadable)" in res.stderr


def test_files_and_folders_follow_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        out = tmp_path / "ck"
        assert run("train", *FAST, "--alpha", "0.5", "--rounds", "1", "--store", out).exit_code == 0
        assert run("spectrum", "--store", out, "--out", tmp_path / "fig").exit_code == 0
    finally:
        os.umask(old)
    paths = [p for p in [*out.rglob("*"), *(tmp_path / "fig").rglob("*")]]
    files = {stat.S_IMODE(p.stat().st_mode) for p in paths if p.is_file()}
    dirs = {stat.S_IMODE(p.stat().st_mode) for p in paths if p.is_dir()}
    assert files == {0o640} and dirs == {0o750}, (files, dirs)
    assert any(p.name == "global.safetensors" for p in paths) and any(p.suffix == ".png" for p in paths)


def _files(out: Path) -> dict:
    d = run_dir(out)
    return {str(f.relative_to(d)): f.read_bytes() for f in sorted(d.rglob("*.safetensors"))}


@pytest.mark.parametrize("extra", [["--method", "scaffold", "--keep-local", "every:2"], ["--method", "moon"]])
def test_extending_a_run_equals_training_it_that_long(tmp_path, extra):
    args = ["train", *FAST, "--alpha", "0.5", *extra]
    assert run(*args, "--rounds", "3", "--store", tmp_path / "a").exit_code == 0
    refused = one_line(run(*args, "--rounds", "5", "--store", tmp_path / "a"))
    assert "is complete with 3 rounds; add --resume to extend it to 5" in refused
    res = run(*args, "--rounds", "5", "--store", tmp_path / "a", "--resume")
    assert res.exit_code == 0 and "extended from 3 to 5 rounds" in res.stderr
    assert run(*args, "--rounds", "5", "--store", tmp_path / "b").exit_code == 0
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    meta = json.loads((run_dir(tmp_path / "a") / "run.json").read_text())
    assert (meta["rounds"], meta["rounds_complete"], meta["status"]) == (5, 5, "complete")
    res = run(*args, "--rounds", "4", "--store", tmp_path / "a")  # a shorter run is part of it
    assert res.exit_code == 0 and "already complete" in res.stderr


def test_overwrite_replaces_a_run_of_another_configuration_and_says_so(tmp_path):
    out = tmp_path / "ck"
    assert run("train", *FAST, "--alpha", "0.5", "--rounds", "1", "--store", out).exit_code == 0
    d = run_dir(out)
    meta = json.loads((d / "run.json").read_text())
    (d / "run.json").write_text(json.dumps({**meta, "momentum": 0.5}))  # another configuration under this name
    res = run("train", *FAST, "--alpha", "0.5", "--rounds", "1", "--store", out, "--overwrite")
    assert res.exit_code == 0 and f"--overwrite replaces {d} (a run that differs in momentum)" in res.stderr
    assert json.loads((d / "run.json").read_text())["momentum"] == 0.9


def test_training_writes_one_line_per_round_to_a_log(tmp_path):
    res = run("train", *FAST, "--alpha", "0.5", "--rounds", "2", "--store", tmp_path / "ck")  # stderr is not a terminal
    lines = [ln for ln in res.stderr.splitlines() if " round " in ln and "test acc" in ln]
    assert [ln.split(" round ")[1].split(":")[0] for ln in lines] == ["1/2", "2/2"]
    assert all(ln.rstrip().endswith(" s)") for ln in lines)


def test_an_unfinished_run_is_refused_unless_one_round_is_named(tmp_path):
    out = tmp_path / "ck"
    assert run("train", *FAST, "--alpha", "0.5", "--alpha", "inf", "--rounds", "2", "--store", out).exit_code == 0
    d = sorted(p for p in out.iterdir() if (p / "run.json").is_file())[0]
    meta = json.loads((d / "run.json").read_text())
    (d / "run.json").write_text(json.dumps({**meta, "status": "running", "rounds_complete": 1}))
    res = run("spectrum", "--store", out, "--out", tmp_path / "fig", "--json")
    assert res.exit_code == 2 and not (tmp_path / "fig").exists()
    assert f"{d.name} is unfinished (1 of 2 rounds)" in res.stderr and "--round 1" in res.stderr
    assert "train --resume" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    res = run("spectrum", "--store", out, "--out", tmp_path / "fig", "--json", "--round", "1")  # the user asks
    assert res.exit_code == 0 and "is unfinished (1 of 2 rounds)" in res.stderr
    assert {e["round"] for e in json.loads(res.stdout)["spectra"]} == {1}


def test_spectrum_over_rounds_says_a_deleted_round_and_skips_a_pruned_one(tmp_path):
    out, kept = tmp_path / "ck", tmp_path / "last"
    assert run("train", *FAST, "--alpha", "0.5", "--rounds", "2", "--store", out).exit_code == 0
    assert run("train", *FAST, "--alpha", "0.5", "--rounds", "2", "--store", kept, "--keep-global", "last").exit_code == 0
    (run_dir(out) / "round_1" / "global.safetensors").unlink()
    res = run("spectrum", "--store", out, "--over-rounds", "all", "--out", tmp_path / "f")
    assert res.exit_code == 2 and "round_1/global.safetensors is missing, and the run did not prune it" in res.stderr
    res = run("spectrum", "--store", kept, "--over-rounds", "all", "--out", tmp_path / "g", "--json")
    assert res.exit_code == 0 and {e["round"] for e in json.loads(res.stdout)["rounds"]} == {2}  # 0 and 1 pruned


def test_runs_names_a_truncated_checkpoint_and_resume_rewrites_a_truncated_partition(tmp_path):
    out = tmp_path / "ck"
    assert run("train", *FAST, "--alpha", "0.5", "--rounds", "2", "--store", out).exit_code == 0
    d = run_dir(out)
    part = d / "partition.safetensors"
    whole = part.read_bytes()
    client = sorted((d / "round_2").glob("client_*.safetensors"))[0]
    client.write_bytes(client.read_bytes()[:40])
    res = run("runs", "--store", out)
    assert res.exit_code == 0 and f"DAMAGED: round_2/{client.name} is truncated" in res.stdout
    part.write_bytes(whole[:50])
    assert run("train", *FAST, "--alpha", "0.5", "--rounds", "3", "--store", out, "--resume").exit_code == 0
    assert part.read_bytes() == whole  # the same partition (run.json's hash), written whole again
