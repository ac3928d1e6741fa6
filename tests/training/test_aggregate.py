"""FedAvg against a hand-computed weighted average."""
from __future__ import annotations

import pytest
import torch

from collapse_lab.methods.aggregate import weighted_average
from collapse_lab.models import build_model


def test_hand_computed_weighted_average():
    a = {"w": torch.tensor([1.0, 2.0]), "n": torch.tensor(4)}
    b = {"w": torch.tensor([3.0, 6.0]), "n": torch.tensor(8)}
    out = weighted_average([a, b], [1, 3])  # weights 1/4 and 3/4
    assert torch.equal(out["w"], torch.tensor([2.5, 5.0]))
    assert out["n"].item() == 7 and out["n"].dtype == a["n"].dtype


def test_batchnorm_buffers_are_averaged():
    states = []
    for s in range(3):
        torch.manual_seed(s)
        m = build_model("resnet20", 10, (3, 8, 8))
        m.train()
        m(torch.randn(4, 3, 8, 8) * (s + 1))  # different running statistics per client
        states.append({k: v.clone() for k, v in m.state_dict().items()})
    sizes = [10, 20, 70]
    out = weighted_average(states, sizes)
    key = "bn1.running_var"
    expected = sum(n * st[key].double() for n, st in zip(sizes, states)) / 100
    assert torch.allclose(out[key].double(), expected, rtol=1e-6)
    assert set(out) == set(states[0])


def test_single_client_is_identity_and_bad_weights():
    s = {"w": torch.randn(3, 3)}
    assert torch.equal(weighted_average([s], [5])["w"], s["w"])
    with pytest.raises(ValueError):
        weighted_average([s, s], [0, 0])
