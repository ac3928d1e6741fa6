"""The probe set is a fixed, seeded subset of the test set; the probe's numbers are the
float64 spectrum of the model's representations on it."""
from __future__ import annotations

import numpy as np
import torch

from collapse_lab.training.probe import Probe, probe_indices
from tests.training.methods_common import data, make


def test_probe_indices_are_a_fixed_seeded_subset():
    a = probe_indices(5000, 1000, seed=3)
    assert len(a) == 1000 and len(set(a.tolist())) == 1000 and torch.equal(a, a.sort().values)
    assert torch.equal(a, probe_indices(5000, 1000, seed=3)) and not torch.equal(a, probe_indices(5000, 1000, seed=4))
    assert torch.equal(probe_indices(300, 1000, seed=3), torch.arange(300))


def test_probe_spectrum_equals_numpy():
    _, model, _ = make("fedavg")
    x, _ = data(40, 2)
    out = Probe(x, lambda t: t, 16)(model)
    z = model.eval()(x)[1].detach().double().numpy()
    zc = z - z.mean(0)
    ev = np.sort(np.linalg.eigvalsh(zc.T @ zc / len(z)))[::-1].clip(0)
    assert out["probe_n"] == 40 and out["probe_dim"] == z.shape[1]
    assert np.allclose(out["probe_sv"], ev[:100], atol=1e-6 * ev[0])
    assert out["probe_dead_units"] == int((z.var(0) <= np.finfo(float).eps * max(z.shape) * z.var(0).max()).sum())
    q = ev[ev > out["probe_floor"]] / ev[ev > out["probe_floor"]].sum()
    assert np.isclose(out["probe_effective_rank"], np.exp(-(q * np.log(q)).sum()), rtol=1e-6)
    assert np.isclose(out["probe_stable_rank"], ev.sum() / ev[0], rtol=1e-6)
    w = model.classifier.weight.detach().double().numpy()
    assert np.allclose(out["probe_classifier_sv"], np.linalg.svd(w, compute_uv=False), rtol=1e-10)
