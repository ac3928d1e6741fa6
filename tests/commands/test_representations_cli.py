"""cka / nc on a real run store, checked against numpy computations from the stored checkpoints."""
from __future__ import annotations

import json

import numpy as np

from collapse_lab.data import load_dataset
from collapse_lab.store import find_runs
from tests.commands.test_spectrum_cli import direct_z, invoke
from tests.spectra.test_representation_metrics import _hsic_numpy


def _cka_numpy(x, y):
    return _hsic_numpy(x, y) / np.sqrt(_hsic_numpy(x, x) * _hsic_numpy(y, y))


def test_cka_matrix_equals_the_gram_matrix_formula_on_the_stored_models(store, tmp_path):
    res = invoke("cka", "--store", str(store), "--alpha", "inf", "--over-rounds", "1,3", "--out", str(tmp_path), "--json")
    assert res.exit_code == 0, res.output
    (rec,) = json.loads(res.stdout)["cka"]
    assert rec["models"] == ["global", "client 0", "client 1", "client 2", "client 3"] and rec["round"] == 3
    m = np.array(rec["cka"])
    assert np.allclose(m, m.T) and np.allclose(np.diag(m), 1.0)
    run = {r.path.name: r for r in find_runs(store)}[rec["run"]]
    zg = direct_z(run, 3)[0].numpy()
    for k in (0, 2):
        assert np.isclose(m[0, k + 1], _cka_numpy(zg, direct_z(run, 3, k)[0].numpy()), rtol=1e-8)
    assert np.isclose(m[1, 3], _cka_numpy(direct_z(run, 3, 0)[0].numpy(), direct_z(run, 3, 2)[0].numpy()), rtol=1e-8)
    over = rec["over_rounds"]["client 1"]
    assert over["rounds"] == [1, 3] and np.isclose(over["cka_with_global"][1], m[0, 2])
    assert all((tmp_path / p.split("/")[-1]).stat().st_size > 1000 for p in rec["figures"])


def test_nc_metrics_equal_numpy_on_the_stored_models(store, tmp_path):
    res = invoke("nc", "--store", str(store), "--alpha", "0.1", "--reg", "none", "--out", str(tmp_path), "--json")
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["neural_collapse"]
    assert [e["model"] for e in rows] == ["global", "client_0"]
    run = {r.path.name: r for r in find_runs(store)}[rows[0]["run"]]
    y = load_dataset("gaussian", **run.meta["dataset_options"]).test_y.numpy()
    for e, k in zip(rows, (None, 0)):
        z, w = direct_z(run, 3, k)
        h, w = z.numpy(), w.detach().double().numpy()
        mu = np.stack([h[y == c].mean(0) for c in range(w.shape[0])])
        m = mu - mu.mean(0)
        dev = h - mu[y]
        nc1 = np.trace(dev.T @ dev / len(y) @ np.linalg.pinv(m.T @ m / len(m))) / len(m)
        assert np.isclose(e["nc1"], nc1, rtol=1e-6)
        nc3 = ((w / np.linalg.norm(w) - m / np.linalg.norm(m)) ** 2).sum()
        assert np.isclose(e["nc3"], nc3, rtol=1e-6)
        state = run.load_global(3) if k is None else run.load_client(3, k)
        logits = h @ w.T + state["classifier.bias"].double().numpy()
        ncc = ((h[:, None, :] - mu[None]) ** 2).sum(-1).argmin(1)
        assert np.isclose(e["nc4"], (logits.argmax(1) == ncc).mean())


def test_cka_without_client_checkpoints_is_refused(tmp_path):
    from click.testing import CliRunner

    from collapse_lab.cli import cli
    from tests.commands.conftest import GAUSS

    out = tmp_path / "ck"
    assert CliRunner().invoke(cli, ["train", *GAUSS, "--alpha", "inf", "--keep-local", "none", "--store", str(out)]).exit_code == 0
    res = invoke("cka", "--store", str(out), "--out", str(tmp_path))
    assert res.exit_code == 2 and "train with --keep-local all" in res.stderr
