"""Crash safety: SIGKILL a training process at several points, resume, and compare every
stored byte with an uninterrupted run; SIGTERM stops with a resume hint."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from collapse_lab.cli import cli
from tests.fixtures import tiny_train_args

pytestmark = pytest.mark.slow  # SIGKILLed subprocesses

ARGS = ["train", *tiny_train_args(rounds=3, clients=3, alpha="0.5", device="cpu")]

METHODS = {"fedavg_feddecorr": ["--reg", "feddecorr"], "scaffold": ["--method", "scaffold"],
           "moon": ["--method", "moon"],
           # the stateful baselines, and FedETF's add-ons on a stateful method
           "feddyn": ["--method", "feddyn"], "fedadam": ["--method", "fedadam"], "fedyogi": ["--method", "fedyogi"],
           "fedadagrad": ["--method", "fedadagrad"], "fedproto": ["--method", "fedproto", "--reg", "feddecorr"],
           "scaffold_etf_gmv": ["--method", "scaffold", "--method-option", "etf_scale=1", "--method-option",
                                "gmv_weight=0.5", "--method-option", "gmv_warmup=2"]}
# mid local epoch (5th step of client 1 in round 2), between clients (after client 0 of
# round 2), inside an atomic write (the 12th: temporary file written, not yet renamed)
FAULTS = ["step:2:1#5", "client:2:0", "write#12"]


def faults_of(name: str) -> list[str]:
    """FedAvg+FedDecorr at every fault; each other method at one, in turn, so every fault
    meets three or more methods' states (SCAFFOLD's controls, MOON's previous model, the
    server optimisers' moments) and a process start is not paid 27 times."""
    names = sorted(METHODS)
    return FAULTS if name == "fedavg_feddecorr" else [FAULTS[names.index(name) % len(FAULTS)]]


def _env(fault=None):
    env = dict(os.environ)
    env.pop("COLLAPSE_LAB_FAULT", None)
    if fault:
        env["COLLAPSE_LAB_FAULT"] = fault
    return env


def _snapshot(out: Path) -> dict:
    """Every checkpoint's bytes and the metrics without wall-clock fields."""
    (run,) = [p for p in out.iterdir() if (p / "run.json").is_file()]
    files = {str(f.relative_to(run)): f.read_bytes() for f in sorted(run.rglob("*.safetensors"))}
    events = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    for e in events:
        e.pop("seconds", None)
        e.pop("write_wait_seconds", None)
        e.pop("write_seconds", None)
        e.pop("probe_seconds", None)
        for k in ("local_seconds", "aggregate_seconds", "eval_seconds"):
            e.pop(k, None)
    meta = json.loads((run / "run.json").read_text())
    return {"files": files, "events": events, "status": meta["status"], "rounds": meta["rounds_complete"]}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    out = {}
    for name, extra in METHODS.items():
        d = tmp_path_factory.mktemp(f"ref_{name}")
        res = CliRunner().invoke(cli, [*ARGS, *extra, "--store", str(d)])
        assert res.exit_code == 0, res.output
        out[name] = _snapshot(d)
    return out


@pytest.mark.parametrize("name", sorted(METHODS))
def test_sigkill_then_resume_is_bit_identical(tmp_path, reference, name):
    ref = reference[name]
    assert ref["status"] == "complete" and any("method" in f for f in ref["files"]) == (name != "fedavg_feddecorr")
    for fault in faults_of(name):
        out = tmp_path / fault.replace(":", "_").replace("#", "_")
        cmd = [sys.executable, "-m", "collapse_lab.cli", *ARGS, *METHODS[name], "--store", str(out)]
        proc = subprocess.run(cmd, env=_env(fault), capture_output=True, text=True, timeout=300)
        assert proc.returncode == -signal.SIGKILL, (fault, proc.returncode, proc.stderr[-500:])
        runs = [p for p in out.iterdir() if (p / "run.json").is_file()]
        if runs:  # without --resume an unfinished run is refused, and nothing changes
            before = _snapshot(out)
            assert before["status"] == "running" and before["rounds"] < 3
            res = CliRunner().invoke(cli, [*ARGS, *METHODS[name], "--store", str(out)])
            assert res.exit_code == 2 and "add --resume to continue it" in res.stderr
        res = CliRunner().invoke(cli, [*ARGS, *METHODS[name], "--store", str(out), "--resume", "--json"])
        assert res.exit_code == 0, (fault, res.output)
        got = _snapshot(out)
        assert got["status"] == "complete"
        assert sorted(got["files"]) == sorted(ref["files"]), fault
        for f in ref["files"]:
            assert got["files"][f] == ref["files"][f], (fault, f)
        assert got["events"] == ref["events"], fault
        assert not list(out.rglob("*.tmp")), fault


def test_sigterm_stops_after_the_client_with_a_resume_hint(tmp_path):
    out = tmp_path / "ck"
    cmd = [sys.executable, "-m", "collapse_lab.cli", *ARGS[:-8], "--rounds", "200", "--clients", "3", "--alpha", "0.5",
           "--device", "cpu", "--store", str(out)]
    proc = subprocess.Popen(cmd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not list(out.glob("*/round_1/global.safetensors")):
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err[-500:]
    last = err.strip().splitlines()[-1]
    assert re.match(r"SIGTERM: stopped gaussian_mlp_fedavg_none_dir0\.5_K3_s0_[0-9a-f]{8} in round ", last), last
    assert "Continue with: collapse-lab train" in last and last.endswith("--resume")
    assert "Traceback" not in err
    (run,) = [p for p in out.iterdir() if (p / "run.json").is_file()]
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "running" and 1 <= meta["rounds_complete"] < 200
