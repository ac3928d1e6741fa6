"""A store's unfinished runs leave a machine as a few bounded files (store/snapshot.py) and
continue on another bit for bit: a run SIGKILLed mid-round, packed into small parts, restored
into an empty store and resumed ends with every byte an uninterrupted run stores."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from collapse_lab.cli import cli
from collapse_lab.store import RunDir
from collapse_lab.store.snapshot import pack, unfinished, unpack
from tests.fixtures import tiny_train_args

pytestmark = pytest.mark.slow  # SIGKILLed subprocesses

ARGS = ["train", *tiny_train_args(rounds=5, clients=3, alpha="0.5", device="cpu"), "--keep-local", "last"]
METHODS = {"fedavg_feddecorr": ["--reg", "feddecorr"], "scaffold": ["--method", "scaffold"]}  # no state; both states


def _final(store: Path) -> dict:
    (run,) = [p for p in store.iterdir() if (p / "run.json").is_file()]
    r = RunDir(run)
    last = r.meta["rounds_complete"]
    files = {str(f.relative_to(run)): f.read_bytes() for f in sorted(r.round_dir(last).glob("*.safetensors"))}
    acc = [(e["round"], e["test_acc"]) for e in r.metrics() if e.get("event") == "round"]
    return {"files": files, "acc": acc, "status": r.meta["status"], "torch": r.meta["versions"]["torch"]}


@pytest.mark.parametrize("name", sorted(METHODS))
def test_a_killed_run_packed_small_resumes_elsewhere_bit_for_bit(tmp_path, name):
    ref = tmp_path / "uninterrupted"
    res = CliRunner().invoke(cli, [*ARGS, *METHODS[name], "--store", str(ref)])
    assert res.exit_code == 0, res.output
    first = tmp_path / "first-machine"
    env = {**os.environ, "COLLAPSE_LAB_FAULT": "client:4:1"}  # killed in round 4, after client 1
    proc = subprocess.run([sys.executable, "-m", "collapse_lab.cli", *ARGS, *METHODS[name], "--store", str(first)],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-500:]
    (run,) = unfinished(first)
    assert run.meta["rounds_complete"] == 3

    out = pack(first, tmp_path / "returned", budget_bytes=10 ** 7, part_bytes=4096)
    parts = [Path(p) for p in out["parts"]]
    assert out["packed"] == [run.path.name] and len(parts) > 1 and all(p.stat().st_size <= 4096 for p in parts)
    assert sum(p.stat().st_size for p in parts) < run.size_bytes()  # the clients and the rounds between stay behind

    second = tmp_path / "second-machine"
    assert unpack(tmp_path / "returned", second) == [run.path.name]
    copy = RunDir(second / run.path.name)
    assert not list(copy.path.rglob("client_*.safetensors"))
    assert copy.pruned()["local"] == {1, 2, 3} and copy.pruned()["global"] == {0, 1, 2}
    res = CliRunner().invoke(cli, [*ARGS, *METHODS[name], "--store", str(second), "--resume"])
    assert res.exit_code == 0, res.output
    assert _final(second) == _final(ref)


def test_damaged_parts_are_one_line_not_a_traceback(tmp_path):
    (tmp_path / "state.tar.000").write_bytes(b"not a tar stream at all" * 100)
    from collapse_lab.errors import CollapseLabError

    with pytest.raises(CollapseLabError, match="bring every part back"):
        unpack(tmp_path, tmp_path / "store")
    proc = subprocess.run([sys.executable, "-m", "collapse_lab.store.snapshot", "unpack", str(tmp_path),
                           str(tmp_path / "store")], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr
    assert json.loads(subprocess.run([sys.executable, "-m", "collapse_lab.store.snapshot", "pack", str(tmp_path / "no"),
                                      str(tmp_path / "out"), "1000"], capture_output=True, text=True).stdout or
                      '{"packed": []}')["packed"] == []


def test_a_destination_that_cannot_be_written_is_one_line(tmp_path):
    (tmp_path / "dest").write_text("a file where the parts' folder should go")
    proc = subprocess.run([sys.executable, "-m", "collapse_lab.store.snapshot", "pack", str(tmp_path),
                           str(tmp_path / "dest"), "1000"], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and len(proc.stderr.splitlines()) == 1
