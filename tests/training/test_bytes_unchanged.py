"""Behaviour unchanged across the move of ``train`` into one library function: the fp32 runs
``train`` stores on the CPU are byte for byte the checkpoints collapse-lab 5db58ed stored
for the same options (tests/vectors/train_fp32_5db58ed.json, written by that commit). CPU
kernels differ between instruction sets and torch releases, so the bytes are compared where
both match the vector's."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from collapse_lab.cli import cli

VECTOR = Path(__file__).resolve().parents[1] / "vectors" / "train_fp32_5db58ed.json"


def test_fp32_train_stores_the_bytes_5db58ed_stored(tmp_path):
    want = json.loads(VECTOR.read_text())
    here = (torch.__version__, torch.backends.cpu.get_cpu_capability())
    if here != (want["torch"], want["cpu_capability"]):
        pytest.skip(f"bytes pinned with torch {want['torch']} on {want['cpu_capability']}; this machine: {here}")
    res = CliRunner().invoke(cli, [*want["args"], "--store", str(tmp_path / "ck")])
    assert res.exit_code == 0, res.output
    root = tmp_path / "ck"
    got = {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*.safetensors"))}
    assert len(want["sha256"]) == 48 and sorted(got) == sorted(want["sha256"])
    assert [name for name in got if got[name] != want["sha256"][name]] == []
