"""Checkpoint round trip and keep-local pruning."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from collapse_lab.errors import CollapseLabError
from collapse_lab.tensor_files import load_tensors, save_tensors
from collapse_lab.models import build_model
from collapse_lab.partition import Partition
from collapse_lab.store import RunDir, parse_keep_local


def test_checkpoint_round_trip_bit_exact(tmp_path):
    torch.manual_seed(0)
    m = build_model("mobilenetv2", 10, (3, 32, 32))
    m.train()
    m(torch.randn(2, 3, 32, 32))  # non-trivial BN buffers
    sd = m.state_dict()
    save_tensors(tmp_path / "m.safetensors", sd)
    back = load_tensors(tmp_path / "m.safetensors")
    assert set(back) == set(sd)
    for k in sd:
        assert back[k].dtype == sd[k].dtype and torch.equal(back[k], sd[k]), k
    # bit-exact includes NaN payloads and signed zeros
    t = {"x": torch.tensor([float("nan"), -0.0, 1e-45])}
    save_tensors(tmp_path / "t.safetensors", t)
    assert load_tensors(tmp_path / "t.safetensors")["x"].view(torch.int32).tolist() == t["x"].view(torch.int32).tolist()
    # safetensors, not pickle: the file starts with an 8-byte header length and JSON
    raw = (tmp_path / "m.safetensors").read_bytes()
    n = int.from_bytes(raw[:8], "little")
    assert raw[8:9] == b"{" and raw[8 + n - 1 : 8 + n].strip() in (b"}", b"")


@pytest.mark.parametrize("spec,kept", [("all", [1, 2, 3, 4, 5]), ("last", [5]), ("none", []), ("every:2", [2, 4, 5])])
def test_keep_local(tmp_path, spec, kept):
    part = Partition.from_indices([np.array([0]), np.array([1])], np.array([0, 1]), 2)
    run = RunDir.create(tmp_path, "r", {"x": 1}, part, {"w": torch.zeros(1)}, {})
    keep = parse_keep_local(spec)
    for r in range(1, 6):
        for k in range(2):
            run.save_client(r, k, {"w": torch.ones(1)})
        run.save_global(r, {"w": torch.ones(1)})
        run.prune(r, ("all", 0), keep, 5)
    have = sorted({int(p.parent.name.split("_")[1]) for p in run.path.glob("round_*/client_*.safetensors")})
    assert have == kept
    assert all(run.global_path(r).exists() for r in range(6))
    # what went is recorded, so it is never taken for damage
    assert run.pruned()["local"] == {1, 2, 3, 4, 5} - set(kept) and run.pruned()["global"] == set()


def test_bad_keep_local():
    for bad in ("some", "every:0", "every:x", "every:\u00b2", "every:\u0663"):
        with pytest.raises(CollapseLabError):
            parse_keep_local(bad)


def test_checkpoint_metadata_names_round_and_model(tmp_path):
    from collapse_lab.tensor_files import read_metadata

    part = Partition.from_indices([np.array([0])], np.array([0]), 1)
    run = RunDir.create(tmp_path, "r", {"x": 1}, part, {"w": torch.zeros(1)}, {})
    run.save_client(3, 7, {"w": torch.ones(1)})
    assert read_metadata(run.client_path(3, 7)) == {"model": "client_7", "round": "3"}
    assert read_metadata(run.global_path(0)) == {"model": "global", "round": "0"}
