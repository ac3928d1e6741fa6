"""Behaviour unchanged across the move of ``train`` into one library function: the fp32 runs
``train`` stores on the CPU are byte for byte the checkpoints collapse-lab 5db58ed stored
for the same options (tests/vectors/train_fp32_5db58ed*.json, each written by that commit's
code). CPU kernels differ between instruction sets, vendors and torch releases, so a vector is
compared on a machine whose kernel fingerprint (tests/training/kernels.py) is the one written
beside it; the first vector, written without one, where torch and the capability match."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from collapse_lab.cli import cli
from tests.training.kernels import fingerprint

VECTORS = Path(__file__).resolve().parents[1] / "vectors"


def vector_for_this_machine() -> dict | None:
    here = (torch.__version__, torch.backends.cpu.get_cpu_capability())
    kept = [json.loads(p.read_text()) for p in sorted(VECTORS.glob("train_fp32_5db58ed*.json"))]
    fp = fingerprint()
    for v in kept:
        if v.get("kernels") == fp and (v["torch"], v["cpu_capability"]) == here:
            return v
    # the first vector's machine is known by torch and capability alone; a machine with a
    # fingerprint of its own kept is not that machine
    if any(v.get("kernels") == fp for v in kept):
        return None
    return next((v for v in kept if "kernels" not in v and (v["torch"], v["cpu_capability"]) == here), None)


def test_fp32_train_stores_the_bytes_5db58ed_stored(tmp_path):
    want = vector_for_this_machine()
    if want is None:
        pytest.skip(f"no 5db58ed bytes kept for torch {torch.__version__} on "
                    f"{torch.backends.cpu.get_cpu_capability()} with kernels {fingerprint()}")
    res = CliRunner().invoke(cli, [*want["args"], "--store", str(tmp_path / "ck")])
    assert res.exit_code == 0, res.output
    root = tmp_path / "ck"
    got = {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*.safetensors"))}
    assert len(want["sha256"]) == 48 and sorted(got) == sorted(want["sha256"])
    assert [name for name in got if got[name] != want["sha256"][name]] == []


def test_the_fingerprint_tells_kernels_apart():
    """The same computation under another instruction set gives another fingerprint (in a
    fresh interpreter: torch reads ATEN_CPU_CAPABILITY once), and the same one twice here."""
    assert fingerprint() == fingerprint()
    code = "from tests.training.kernels import fingerprint; print(fingerprint())"
    root = Path(__file__).resolve().parents[2]
    other = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True,
                           env={**os.environ, "ATEN_CPU_CAPABILITY": "default"}).stdout.strip()
    if torch.backends.cpu.get_cpu_capability() == "DEFAULT":
        pytest.skip("this machine runs the default kernels already")
    assert other != fingerprint()
