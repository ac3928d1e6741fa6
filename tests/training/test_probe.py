"""The probe set is a fixed, seeded subset of the test set; the probe's numbers are the
float64 spectrum of the model's representations on it."""
from __future__ import annotations

import json

import numpy as np
import pytest
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


def _measures(ev: np.ndarray) -> dict:
    """n above tau, effective rank and participation ratio of descending eigenvalues, by hand."""
    from collapse_lab.spectra.functional import DEFAULT_TAU

    q = ev[ev > 1e-12 * ev[0]] / ev[ev > 1e-12 * ev[0]].sum()
    return {"n_significant": int((ev > DEFAULT_TAU).sum()), "effective_rank": float(np.exp(-(q * np.log(q)).sum())),
            "participation_ratio": float(ev.sum() ** 2 / (ev ** 2).sum())}


@pytest.mark.slow  # trains through the command, end to end
def test_probe_layers_log_what_a_hand_written_extraction_of_the_stored_models_gives(tmp_path):
    """train --probe-layers (issue 50 item 3): each round's per-layer measures of the global
    model and of client 0 in metrics.jsonl equal numpy's, from this test's own hooks on the
    stored checkpoints over the probe set; --probe 0 with it is one line."""
    from click.testing import CliRunner

    from collapse_lab.analysis.features import FeatureSource
    from collapse_lab.api import open_store
    from collapse_lab.cli import cli
    from tests.test_layerwise import _hand

    args = ["train", "--alpha", "0.1", "--rounds", "2", "--clients", "3", "--local-epochs", "1"]
    res = CliRunner().invoke(cli, [*args, "--probe", "150", "--store", str(tmp_path / "ck"), "--probe-layers"])
    assert res.exit_code == 0, res.output
    run, = open_store(tmp_path / "ck")
    events = run.metrics("probe_layers")
    assert [(e["round"], e["model"]) for e in events] == [(0, "global"), (1, "client_0"), (1, "global"),
                                                          (2, "client_0"), (2, "global")]
    fs = FeatureSource()
    ds, _ = fs.dataset(run.config)
    x = ds.to_float(ds.test_x[probe_indices(len(ds.test_y), 150, 0)], torch.float64)
    for e in events:
        model = fs.model(run.dir, e["round"], 0 if e["model"] == "client_0" else None)
        ref = _hand(model, x, list(e["layers"]))
        assert list(e["layers"])[-1] == "z" and len(e["layers"]) >= 2
        for name, got in e["layers"].items():
            want = _measures(ref[name])
            assert got["width"] == len(ref[name]) and got["n_significant"] == want["n_significant"], (e, name)
            for m in ("effective_rank", "participation_ratio"):
                assert np.isclose(got[m], want[m], rtol=1e-7), (e["round"], e["model"], name, m)
    # layers --logged draws the same numbers without a checkpoint
    res = CliRunner().invoke(cli, ["layers", "--store", str(tmp_path / "ck"), "--logged", "--over-rounds", "0:2", "--json",
                                   "--out", str(tmp_path / "f")])
    assert res.exit_code == 0, res.output
    logged = {(e["round"], e["model"], e["layer"]): e["effective_rank"] for e in json.loads(res.stdout)["layers"]}
    assert logged == {(e["round"], e["model"], name): v["effective_rank"] for e in events for name, v in e["layers"].items()}
    bad = CliRunner().invoke(cli, [*args, "--probe", "0", "--probe-layers", "--store", str(tmp_path / "b")])
    assert bad.exit_code == 2 and "--probe-layers" in bad.output and "--probe N" in bad.output
    assert len(bad.output.strip().splitlines()) == 1 and not (tmp_path / "b").exists()
