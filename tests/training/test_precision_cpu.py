"""bf16 on a CPU (issue 38): asked for, it trains under autocast with fp32 weights; ``auto``
picks it only on a CPU that multiplies bf16 natively and measurably faster."""
from __future__ import annotations

import json

import pytest
import torch

from collapse_lab.training import fast
from tests.fixtures import invoke, tiny_train_args


def test_auto_follows_the_cpu_and_cuda_stays_bf16(monkeypatch):
    cpu, gpu = torch.device("cpu"), torch.device("cuda")
    monkeypatch.setattr(fast, "cpu_bf16_faster", lambda threads: False)
    assert fast.resolve_precision("auto", cpu) == "fp32" and fast.resolve_precision("auto", gpu) == "bf16"
    assert fast.resolve_precision("bf16", cpu) == "bf16" and fast.resolve_precision("fp32", gpu) == "fp32"
    monkeypatch.setattr(fast, "cpu_bf16_faster", lambda threads: True)
    assert fast.resolve_precision("auto", cpu) == "bf16"


def test_without_native_bf16_the_cpu_is_never_called_faster(monkeypatch):
    monkeypatch.setattr(fast, "cpu_bf16_native", lambda: False)
    fast.cpu_bf16_faster.cache_clear()
    try:
        assert fast.cpu_bf16_faster(2) is False
    finally:
        fast.cpu_bf16_faster.cache_clear()


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
