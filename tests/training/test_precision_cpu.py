"""bf16 on a CPU (issues 38, 47): asked for, it trains under autocast with fp32 weights;
``auto`` is fp32 on every CPU."""
from __future__ import annotations

import json

import pytest
import torch

from collapse_lab.runspec import speed
from collapse_lab.training import fast
from tests.fixtures import invoke, tiny_train_args


@pytest.mark.precision("fp32")  # compares with fp32 numbers, run names or round-off
def test_auto_is_the_device_kind_alone(monkeypatch):
    """auto: bf16 on CUDA, fp32 on every CPU, whatever its flags or load (issue 47): nothing
    is timed and /proc/cpuinfo is not read."""
    cpu, gpu = torch.device("cpu"), torch.device("cuda")
    for native in (False, True):
        monkeypatch.setattr(fast, "cpu_bf16_native", lambda native=native: native)
        assert speed.resolve_precision("auto", cpu) == "fp32" and speed.resolve_precision("auto", gpu) == "bf16"
        assert speed.resolve_precision("bf16", cpu) == "bf16" and speed.resolve_precision("fp32", gpu) == "fp32"
    import time as time_module

    def no_clock():
        raise AssertionError("resolve_precision read the clock")

    monkeypatch.setattr(time_module, "perf_counter", no_clock)
    assert speed.resolve_precision("auto", cpu) == "fp32"


def test_bf16_on_the_cpu_trains_under_autocast_with_fp32_weights(tmp_path):
    from safetensors.torch import load_file

    args = tiny_train_args(epochs=1, rounds=2, clients=3, alpha="0.5", device="cpu")
    states = {}
    for p in ("fp32", "bf16"):
        res = invoke("train", *args, "--precision", p, "--store", tmp_path / p, "--json")
        assert res.exit_code == 0, res.output
        run = tmp_path / p / json.loads(res.stdout)["runs"][0]["run"].split("/")[-1]
        assert json.loads((run / "run.json").read_text())["precision"] == p
        states[p] = load_file(run / "round_2" / "global.safetensors")
    assert all(v.dtype == torch.float32 for v in states["bf16"].values() if v.is_floating_point())
    # the products ran in bf16 (8 bits of mantissa): the weights moved apart by far more
    # than fp32 round-off, and by far less than training moves them
    num = sum((states["bf16"][k] - states["fp32"][k]).norm() ** 2 for k in states["fp32"]) ** 0.5
    den = sum(states["fp32"][k].norm() ** 2 for k in states["fp32"]) ** 0.5
    assert 1e-5 < float(num / den) < 5e-2, float(num / den)


@pytest.mark.precision("fp32")  # compares with fp32 numbers, run names or round-off
def test_a_resume_keeps_the_precision_the_run_trained_in(tmp_path):
    """A run trained in bf16 (as ``auto`` does on a GPU) and continued with ``auto`` on a CPU
    is the same run, extended in bf16 with a note, never a new fp32 run from round 0; the
    first line names the precision; --precision fp32 given is another run (issue 47)."""
    args = [*tiny_train_args(epochs=1, clients=3, alpha="0.5", device="cpu"), "--store", tmp_path]
    first = invoke("train", *args, "--rounds", "1", "--precision", "bf16")
    assert first.exit_code == 0, first.output
    assert first.stderr.splitlines()[0] == "train: 1 run(s), precision bf16 (--precision bf16)"
    again = invoke("train", *args, "--rounds", "2", "--resume", "--json")
    assert again.exit_code == 0, again.output
    first_lines = again.stderr.splitlines()
    assert first_lines[0] == "train: 1 run(s), precision bf16 (auto: bf16 on CUDA, fp32 on a CPU)"
    assert first_lines[1].startswith("note: ") and "holds this run in bf16" in first_lines[1]
    (run,) = json.loads(again.stdout)["runs"]
    assert run["resumed_from"] == 1
    folders = [p for p in tmp_path.iterdir() if (p / "run.json").is_file()]
    assert len(folders) == 1 and json.loads((folders[0] / "run.json").read_text())["rounds_complete"] == 2
    other = invoke("train", *args, "--rounds", "1", "--precision", "fp32")
    assert other.exit_code == 0 and "precision fp32 (--precision fp32)" in other.stderr
    assert len([p for p in tmp_path.iterdir() if (p / "run.json").is_file()]) == 2
