"""Sweeps: the spec's grid through train's resolver, a local pool that survives a SIGKILL
(the rerun completes every run, each equal byte for byte to `train` of it), Ray (equal to
the local backend), bad specs, and `collapse-lab runs`."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from collapse_lab.cli import cli

SPEC = """
base:
  dataset: gaussian
  dataset_options: {dim: 8, train_per_class: 30, test_per_class: 5}
  clients: 3
  rounds: 6
  local_epochs: 2
  batch_size: 8
  decorr_norm: paper  # Eq. 8, as before the paper preset chose the released scaling (see the stacked test)
grid:
  alpha: [0.3, inf]
  reg: [none, feddecorr]
seeds: [0, 1]
"""
TRAIN = ["--dataset", "gaussian", "--dataset-option", "dim=8", "--dataset-option", "train_per_class=30",
         "--dataset-option", "test_per_class=5", "--clients", "3", "--rounds", "6", "--local-epochs", "2",
         "--batch-size", "8"]


def finals(store: Path) -> dict:
    out = {}
    for d in store.iterdir():
        if (d / "run.json").is_file():
            meta = json.loads((d / "run.json").read_text())
            last = d / f"round_{meta['rounds']}" / "global.safetensors"
            out[d.name] = (meta["status"], last.read_bytes() if meta["status"] == "complete" else None)
    return out


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """The 8 runs trained by `train` (2 threads: 2 lanes at one thread each)."""
    store = tmp_path_factory.mktemp("train") / "ck"
    for reg in ("none", "feddecorr"):
        res = CliRunner().invoke(cli, ["train", *TRAIN, "--alpha", "0.3", "--alpha", "inf", "--seed", "0", "--seed", "1",
                                       "--reg", reg, "--store", str(store)]
                                 + (["--decorr-norm", "paper"] if reg == "feddecorr" else []))
        assert res.exit_code == 0, res.output
    return finals(store)


@pytest.mark.slow
def test_a_killed_local_sweep_completes_on_rerun_equal_to_train(tmp_path, trained):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    store = tmp_path / "st"
    cmd = [sys.executable, "-m", "collapse_lab.cli", "sweep", str(spec), "--store", str(store), "--workers", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and len([p for p in store.glob("*/run.json")
                                          if json.loads(p.read_text())["status"] == "complete"]) < 2:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its workers, mid-way
    proc.wait()
    before = finals(store) if store.exists() else {}
    assert 2 <= sum(s == "complete" for s, _ in before.values()) < 8
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-800:]
    assert "8 run(s)" in res.stderr or "of 8 run(s)" in res.stderr
    got = finals(store)
    assert got.keys() == trained.keys() and all(s == "complete" for s, _ in got.values())
    assert all(got[k][1] == trained[k][1] for k in got)  # byte for byte
    table = CliRunner().invoke(cli, ["runs", "--store", str(store), "--where", "reg=feddecorr"])
    assert table.exit_code == 0 and table.output.count("feddecorr 0.1") == 4 and "6/6" in table.output


@pytest.mark.slow
def test_the_ray_backend_equals_the_local_backend(tmp_path, trained):
    pytest.importorskip("ray")
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    res = subprocess.run([sys.executable, "-m", "collapse_lab.cli", "sweep", str(spec), "--store", str(tmp_path / "ray"),
                          "--backend", "ray"], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, (res.stdout[-1500:], res.stderr[-1500:])
    got = finals(tmp_path / "ray")
    assert got.keys() == trained.keys() and all(got[k][1] == trained[k][1] for k in got)


@pytest.mark.slow
def test_a_stacked_sweep_killed_mid_way_completes_equal_to_train_to_round_off(tmp_path, trained):
    """--stack 4: two stacks of four runs (one per worker), killed once rounds exist,
    rerun: every run complete, each final global model train's to fp32 round-off, and
    run.json says it was stacked."""
    import numpy as np
    from safetensors.numpy import load

    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    store = tmp_path / "st"
    cmd = [sys.executable, "-m", "collapse_lab.cli", "sweep", str(spec), "--store", str(store), "--workers", "2",
           "--stack", "4"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and not list(store.glob("*/round_3/global.safetensors")):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not all(s == "complete" for s, _ in finals(store).values())
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-800:]
    got = finals(store)
    assert got.keys() == trained.keys() and all(s == "complete" for s, _ in got.values())
    for k in got:
        a, b = load(trained[k][1]), load(got[k][1])
        for name in a:  # fp32 round-off grows over 6 rounds (a ReLU flips: one weight 4e-3 off); a wrong member or mask is O(1)
            scale = float(np.abs(a[name]).max())
            assert np.abs(b[name] - a[name]).max() <= 1e-2 * scale and np.abs(b[name] - a[name]).mean() <= 1e-4 * scale
        assert json.loads((store / k / "run.json").read_text())["stacked"] == 4


@pytest.mark.parametrize("text,msg", [
    ("grid:\n  alpha: [0.1]\nsedes: [0]\n", "unknown key 'sedes'"),
    ("grid:\n  alpha: []\n", "grid.alpha must be a non-empty list"),
    ("grid:\n  rounds: [two]\n", "--rounds 'two' is not a whole number"),
    ("grid:\n  lrr: [0.1]\n", "unknown option(s) lrr"),
    ("grid:\n  device: [cpu, cuda]\n", "grid.device varies device, which cannot vary in a sweep"),
    ("grid:\n  parallel_clients: [1, 2]\n", "cannot vary in a sweep"),
    ("seeds: []\n", "seeds must be a non-empty list"),
    ("grid:\n  combo: [{method: moon}, 3]\n", "grid.combo must be a list of option mappings"),
    ("base:\n  partition: pathological\ngrid:\n  alpha: [0.1, 1]\n",
     "--alpha has no effect with --partition pathological (it takes --classes-per-client) in every point"),
])
def test_a_bad_spec_is_one_line_and_writes_nothing(tmp_path, text, msg):
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    res = CliRunner().invoke(cli, ["sweep", str(spec), "--store", str(tmp_path / "st")])
    assert res.exit_code == 2, res.output
    assert len(res.stderr.strip().splitlines()) == 1 and msg in res.stderr, res.stderr
    assert not (tmp_path / "st").exists()


def test_dry_run_lists_status_and_estimates(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.replace("rounds: 6", "rounds: 2"))
    args = ["sweep", str(spec), "--store", str(tmp_path / "st"), "--dry-run", "--json"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert len(out["runs"]) == 8 and {r["status"] for r in out["runs"]} == {"missing"} and out["estimate_bytes"] > 0
    # one of them trained (by train), one unfinished: the dry run says so
    t = CliRunner().invoke(cli, ["train", *TRAIN[:-6], "--rounds", "2", "--local-epochs", "2", "--batch-size", "8",
                                 "--alpha", "0.3", "--store", str(tmp_path / "st")])
    assert t.exit_code == 0, t.output
    out = json.loads(CliRunner().invoke(cli, args).stdout)
    assert sorted(r["status"] for r in out["runs"]).count("complete") == 1 and out["to_train"] == 7
    assert out["estimate_seconds"] is not None  # timed from the finished run


def test_a_grid_may_cross_an_option_with_a_combination_where_it_has_no_effect(tmp_path):
    """alpha x {dirichlet, pathological}: the pathological points carry no alpha (one run,
    as train would store it), said once; beta x {none, feddecorr} likewise."""
    spec = tmp_path / "spec.yaml"
    spec.write_text("grid:\n  alpha: [0.1, 1]\n  combo:\n    - {partition: dirichlet}\n"
                    "    - {partition: pathological, classes_per_client: 2}\n  beta: [0.1]\n  reg: [none, feddecorr]\n")
    res = CliRunner().invoke(cli, ["sweep", str(spec), "--store", str(tmp_path / "st"), "--dry-run", "--json"])
    assert res.exit_code == 0, res.output
    names = [r["run"] for r in json.loads(res.stdout)["runs"]]
    # dirichlet: 2 alphas x 2 regs; pathological: 1 x 2 regs
    assert len(names) == 6 and sum("_path2_" in n for n in names) == 2
    notes = [ln for ln in res.stderr.splitlines() if ln.startswith("sweep: note:")]
    assert len(notes) == 2 and any("--alpha has no effect" in n and "(4 of 8 points)" in n for n in notes)
    assert any("--beta has no effect" in n for n in notes)
    # the pathological run is train's run of the same options, folder and all
    t = CliRunner().invoke(cli, ["train", "--partition", "pathological", "--classes-per-client", "2", "--rounds", "1",
                                 "--store", str(tmp_path / "t"), "--json"])
    assert t.exit_code == 0, t.output
    tn = Path(json.loads(t.stdout)["runs"][0]["run"]).name
    assert tn in names  # same folder name (the number of rounds is not part of it)


def test_a_regularizers_options_cross_reg_none_as_beta_does(tmp_path):
    """reg_options x {none, feddecorr} (a ladder's Eq. 8 rung on an entry that compares
    FedAvg with FedDecorr): the none runs carry no option (the same runs as without it),
    said once; options for none alone are the spec's error, as train's."""
    spec = tmp_path / "spec.yaml"
    spec.write_text("base:\n  reg_options: {normalization: official}\ngrid:\n  alpha: [0.1]\n  reg: [none, feddecorr]\n")
    res = CliRunner().invoke(cli, ["sweep", str(spec), "--store", str(tmp_path / "st"), "--dry-run", "--json"])
    assert res.exit_code == 0, res.output
    names = [r["run"] for r in json.loads(res.stdout)["runs"]]
    (tmp_path / "plain.yaml").write_text("grid:\n  alpha: [0.1]\n")
    plain = CliRunner().invoke(cli, ["sweep", str(tmp_path / "plain.yaml"), "--store", str(tmp_path / "st"),
                                     "--dry-run", "--json"])
    assert plain.exit_code == 0, plain.output
    assert len(names) == 2 and json.loads(plain.stdout)["runs"][0]["run"] in names
    assert "--reg-option has no effect without a regularizer (--reg none); left at its default" in res.stderr
    spec.write_text("base:\n  reg_options: {normalization: official}\ngrid:\n  alpha: [0.1, 0.5]\n")
    res = CliRunner().invoke(cli, ["sweep", str(spec), "--store", str(tmp_path / "st"), "--dry-run"])
    assert res.exit_code == 2 and "--reg-option has no effect without a regularizer (--reg none) in every point" \
        in res.stderr


@pytest.mark.slow  # trains till divergence (5 s)
def test_a_diverged_run_fails_the_sweep_once_and_is_then_left_alone(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text("base:\n  rounds: 2\n  local_epochs: 1\n  lr: 50\ngrid:\n  alpha: [0.5]\n")
    args = ["sweep", str(spec), "--store", str(tmp_path / "st"), "--workers", "1"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 1 and "diverged" in res.stderr and "continue the sweep with" in res.stderr
    res = CliRunner().invoke(cli, [*args, "--dry-run", "--json"])
    assert res.exit_code == 0 and [r["status"] for r in json.loads(res.stdout)["runs"]] == ["diverged"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0 and "diverged earlier; not retrained" in res.stderr


def test_units_group_runs_that_stack_evenly_and_leave_the_rest_alone():
    from collapse_lab.config import RunConfig
    from collapse_lab.training.stackable import config_reason
    from collapse_lab.sweep.backends import units

    cfgs = [RunConfig(alpha=a, seed=s) for a in (0.1, 1.0) for s in range(5)]  # 10 that stack
    cfgs += [RunConfig(method="fedprox", seed=s) for s in range(2)]  # local hooks: alone
    cfgs += [RunConfig(lr=0.5, seed=s) for s in range(3)]  # another stack key
    got = units(cfgs, 4, config_reason)
    assert sorted(map(len, got), reverse=True) == [4, 3, 3, 3, 1, 1]
    assert sum(map(len, got)) == len(cfgs)
    assert [len(u) for u in got][-2:] == [1, 1] and all(u[0].method == "fedprox" for u in got[-2:])
    assert all(len({(c.lr,) for c in u}) == 1 for u in got)
    assert units(cfgs, 1, config_reason) == [[c] for c in cfgs]


@pytest.mark.slow  # a worker process (1.4 s)
def test_an_internal_error_in_a_worker_names_its_runs_and_leaves_the_traceback_in_the_log(tmp_path):
    """A bug (not a refusal) inside a worker's unit: each run of the unit is reported failed
    under its own name (a sweep's progress line said "?: failed"), and the worker's log,
    where its stderr goes, holds the traceback to find the bug by."""
    from collapse_lab.config import RunConfig

    cfgs = [RunConfig(dataset="digits", model="mlp", rounds=1, seed=s) for s in (0, 1)]
    code = ("import sys, collapse_lab.sweep.worker as w\n"
            "def boom(*a, **k): raise ZeroDivisionError('a bug')\n"
            "w.run_unit = boom\nsys.argv = ['worker', sys.argv[1], '1']\nsys.exit(w.main())\n")
    res = subprocess.run([sys.executable, "-c", code, str(tmp_path)], input=json.dumps([c.to_json() for c in cfgs]) + "\n",
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert [o["run"] for o in out] == [c.run_name() for c in cfgs]
    assert {o["status"] for o in out} == {"failed"} and out[0]["error"] == "internal error: ZeroDivisionError: a bug"
    assert "Traceback" in res.stderr and "ZeroDivisionError: a bug" in res.stderr


@pytest.mark.slow  # two worker processes train
def test_each_run_is_prepared_once_where_it_trains(tmp_path, monkeypatch):
    """The sweep's parent surveys (names, folders, sizes) and draws no partition: with the
    parent's partition drawing broken, the runs still train in their workers; a partition
    that cannot be drawn fails its run there, named in the summary, and the others complete."""
    import collapse_lab.training.prepare as prep

    def no(*a, **k):
        raise AssertionError("the sweep's parent drew a partition")

    monkeypatch.setattr(prep, "make_partition", no)
    spec = tmp_path / "spec.yaml"
    spec.write_text("base:\n  dataset: gaussian\n  dataset_options: {dim: 8, train_per_class: 6, test_per_class: 5}\n"
                    "  clients: 4\n  rounds: 1\n  local_epochs: 1\n  batch_size: 8\n  partition: pathological\n"
                    "grid:\n  classes_per_client: [1, 3]\n")
    res = CliRunner().invoke(cli, ["sweep", str(spec), "--store", str(tmp_path / "st"), "--workers", "2", "--json"])
    outcome = {r["run"]: r for r in json.loads(res.stdout)["results"]}
    assert res.exit_code == 1, res.output
    ok = [r for r in outcome.values() if r["status"] == "complete"]
    bad = [r for r in outcome.values() if r["status"] == "failed"]
    assert len(ok) == 1 and "_path3_" in ok[0]["run"] and len(bad) == 1 and "_path1_" in bad[0]["run"]
    assert "classes" in bad[0]["error"] and f"failed: {bad[0]['run']}" in res.stderr
    assert not (tmp_path / "st" / bad[0]["run"]).exists()  # nothing written for the run that could not start
