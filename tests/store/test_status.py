"""A run is ``running`` only while a live process holds its lock (issue 47): a run marked
running whose writer was killed or stopped is ``interrupted``, with its last complete round."""
from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from collapse_lab.store import RunDir
from tests.fixtures import invoke, tiny_train_args


@pytest.mark.slow
def test_a_run_without_a_live_writer_is_interrupted(tmp_path):
    res = invoke("train", *tiny_train_args(epochs=1, rounds=2, clients=3, alpha="0.5"), "--store", tmp_path)
    assert res.exit_code == 0, res.output
    (path,) = [p for p in tmp_path.iterdir() if (p / "run.json").is_file()]
    meta = json.loads((path / "run.json").read_text())
    (path / "run.json").write_text(json.dumps({**meta, "status": "running", "rounds_complete": 1}))
    assert RunDir(path).status == "interrupted"
    (row,) = json.loads(invoke("runs", "--store", tmp_path, "--json").stdout)
    assert row["status"] == "interrupted after round 1"
    # a live process holding the run's lock: running
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from collapse_lab.store import lock; "
                               f"lock.acquire({str(path)!r}); print('held', flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert RunDir(path).status == "running"
        (row,) = json.loads(invoke("runs", "--store", tmp_path, "--json").stdout)
        assert row["status"] == "running"
    finally:
        holder.kill()
        holder.wait()
    assert RunDir(path).status == "interrupted"


def test_train_seconds_sum_every_start_and_a_resume_keeps_provenance(tmp_path):
    args = [*tiny_train_args(epochs=1, clients=3, alpha="0.5"), "--store", tmp_path]
    assert invoke("train", *args, "--rounds", "1").exit_code == 0
    (path,) = [p for p in tmp_path.iterdir() if (p / "run.json").is_file()]
    first = json.loads((path / "run.json").read_text())
    meta = {**first, "train_seconds": first["train_seconds"] + 1000.0}  # as if the first start had taken long
    (path / "run.json").write_text(json.dumps(meta))
    t = time.time()
    assert invoke("train", *args, "--rounds", "2", "--resume").exit_code == 0
    second = json.loads((path / "run.json").read_text())
    assert meta["train_seconds"] <= second["train_seconds"] <= meta["train_seconds"] + (time.time() - t)
    for k in ("parallel_clients", "cuda_graphs"):
        assert second[k] == first[k], (k, second[k], first[k])


def test_runs_shows_what_two_runs_differ_by(tmp_path):
    """``runs`` shows local epochs and lr beside the settings a run's name carries."""
    for lr in ("0.05", "0.02"):
        res = invoke("train", *tiny_train_args(epochs=1, rounds=1, clients=3, alpha="0.5"), "--lr", lr, "--store", tmp_path)
        assert res.exit_code == 0, res.output
    header, *lines = invoke("runs", "--store", tmp_path).stdout.splitlines()
    at = {c: header.index(c) for c in ("epochs", "lr", "acc")}
    assert sorted(ln[at["lr"]:at["acc"]].strip() for ln in lines[:2]) == ["0.02", "0.05"]
    assert {ln[at["epochs"]:at["lr"]].strip() for ln in lines[:2]} == {"1"}
    rows = json.loads(invoke("runs", "--store", tmp_path, "--json").stdout)
    assert sorted((r["epochs"], r["lr"]) for r in rows) == [(1, 0.02), (1, 0.05)]
