"""spectrum / compare on a real run store, checked against direct computations."""
from __future__ import annotations

import pytest
import json
import math

import numpy as np
import torch

from collapse_lab.data import load_dataset
from collapse_lab.models import build_model
from collapse_lab.spectra.functional import local_global_gap, spectrum
from collapse_lab.store import find_runs
from tests.fixtures import invoke




def direct_z(run, r, client=None):
    """Independent route: rebuild the model from run.json, run it on the test split."""
    m = run.meta
    ds = load_dataset("gaussian", **m["dataset_options"])
    model = build_model(m["model"], ds.num_classes, ds.input_shape).double().eval()
    model.load_state_dict(run.load_global(r) if client is None else run.load_client(r, client))
    with torch.no_grad():
        return model(ds.to_float(ds.test_x).double())[1], model.classifier.weight


def direct_spectrum(run, r, client=None):
    return spectrum(direct_z(run, r, client)[0])


def test_spectrum_json_matches_direct_computation(store, tmp_path):
    res = invoke("spectrum", "--store", str(store), "--alpha", "0.1", "--out", str(tmp_path), "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    # alpha 0.1 with and without FedDecorr: 2 runs x (global, client_0); and the reference a
    # collapse figure needs, said on stderr: the store's IID run of the plain settings (FedDecorr
    # has none at alpha inf here, so none is drawn for it)
    assert len(out["spectra"]) == 6
    assert {(e["alpha"], e["reg"], e["model"]) for e in out["spectra"]} == {
        (a, r, m) for a, r in (("0.1", "none"), ("0.1", "feddecorr"), ("inf", "none")) for m in ("global", "client_0")}
    assert "the store's IID run(s) of the same settings drawn beside as the reference" in res.stderr
    runs = {r.path.name: r for r in find_runs(store)}
    for e in out["spectra"]:
        assert set(e) >= {"run", "alpha", "round", "model", "singular_values", "n_significant", "tau", "effective_rank"}
        sv, floor = direct_spectrum(runs[e["run"]], e["round"], None if e["model"] == "global" else 0)
        assert np.allclose(e["singular_values"], sv[:100].numpy(), rtol=1e-8, atol=floor)
        assert e["n_significant"] == int((sv > 1e-2).sum()) and e["round"] == 3
        lam = sv.numpy()  # the participation ratio (issue 49's demonstration measure), by its formula
        assert math.isclose(e["participation_ratio"], lam.sum() ** 2 / (lam ** 2).sum(), rel_tol=1e-9)
        # dead units, RankMe and the classifier's singular values, by numpy from the same z and weights
        z, w = direct_z(runs[e["run"]], e["round"], None if e["model"] == "global" else 0)
        zn = z.numpy()
        var = zn.var(axis=0)
        assert e["dead_units"] == int((var <= np.finfo(np.float64).eps * max(zn.shape) * var.max()).sum())
        s = np.linalg.svd(zn, compute_uv=False)
        p = s / s.sum() + 1e-7
        assert np.isclose(e["rankme"], np.exp(-(p * np.log(p)).sum()), rtol=1e-8)
        assert np.allclose(e["classifier_singular_values"], np.linalg.svd(w.detach().numpy(), compute_uv=False),
                           rtol=1e-6)
    assert all(p.endswith((".pdf", ".png")) for p in out["figures"])
    assert all((tmp_path / p.split("/")[-1]).stat().st_size > 1000 for p in out["figures"])


def test_spectrum_all_alphas_and_cache(store, tmp_path):
    res = invoke("spectrum", "--store", str(store), "--out", str(tmp_path), "--json")
    assert res.exit_code == 0, res.output
    alphas = {e["alpha"] for e in json.loads(res.stdout)["spectra"]}
    assert alphas == {"0.1", "inf"}
    cached = list((store / ".features").glob("*.safetensors"))
    assert len(cached) >= 6
    # a second analysis reads the cache: identical numbers, no new cache files
    res2 = invoke("spectrum", "--store", str(store), "--out", str(tmp_path), "--json")
    assert json.loads(res2.stdout)["spectra"] == json.loads(res.stdout)["spectra"]
    assert len(list((store / ".features").glob("*.safetensors"))) == len(cached)


def test_compare_R_matches_direct(store, tmp_path):
    res = invoke("compare", "--store", str(store), "--alpha", "inf", "--out", str(tmp_path), "--json")
    assert res.exit_code == 0, res.output
    e = json.loads(res.stdout)["compare"][0]
    run = {r.path.name: r for r in find_runs(store)}[e["run"]]
    sg, fg = direct_spectrum(run, 3)
    sl, fl = direct_spectrum(run, 3, 0)
    r, k = local_global_gap(sl, sg, fl, fg)
    assert abs(e["R"] - r) < 1e-8 and e["K"] == k and e["R_is"] == "R_floor"


def test_the_pair_measures_are_journal_eq1_by_hand():
    """R_top, R_floor and below_share as registered measures, against Eq. 1 by hand: local
    (10, 1, 0.1), global (1, 1, 1e-30) with floors 1e-3: R_floor over the two resolved
    indices (1 + 0) / 2, R_top over three with the global tail raised to its floor
    (1 + 0 + 2) / 3; the global value is below the local one at index 1 and 3 of 3."""
    import torch

    from collapse_lab.spectra.measures import Inputs, value

    both = Inputs(torch.tensor([10.0, 1.0, 0.1], dtype=torch.float64), 1e-3, top=3,
                  other=torch.tensor([1.0, 1.0, 1e-30], dtype=torch.float64), other_floor=1e-3)
    assert abs(value("R_floor", both) - 0.5) < 1e-12
    assert abs(value("R_top", both) - 1.0) < 1e-12
    assert abs(value("below_share", both) - 2 / 3) < 1e-12


def test_rounds_evolution(store, tmp_path):
    res = invoke("spectrum", "--store", str(store), "--alpha", "inf", "--over-rounds", "all", "--out", str(tmp_path), "--json")
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["rounds"]
    assert [r["round"] for r in rows] == [1, 2, 3] and all("R" in r for r in rows)


def test_bad_analysis_input(store, tmp_path):
    for args, msg in ((["--alpha", "0.5"], "matches --alpha (after the filters before it); the runs left have alpha: "),
                      (["--round", "9"], "has trained rounds 1..3"),
                      (["--round", "0"], "round 0 is the untrained initial model"),
                      (["--client", "7"], "--client 7: "),
                      (["--over-rounds", "x"], "--over-rounds 'x'"),
                      (["--over-rounds", "3:1"], "runs backwards"),
                      (["--over-rounds", "1,2", "--round", "3"], "--round has no effect with --over-rounds"),
                      (["--run", str(store), "--alpha", "inf"], "would be ignored with --run"),
                      (["--tau", "0"], "--tau must be a finite number > 0"),
                      (["--tau", "nan"], "--tau must be a finite number > 0")):
        res = invoke("spectrum", "--store", str(store), "--out", str(tmp_path), *args)
        assert res.exit_code == 2 and msg in res.stderr, (args, res.output)
    res = invoke("spectrum", "--store", str(tmp_path / "empty"))
    assert res.exit_code == 2 and "no trained runs" in res.stderr


def test_seeds_aggregate_and_other_configurations_are_drawn_apart(tmp_path):
    """Two seeds of one configuration become one curve, mean +- std of their log10 singular
    values (checked against numpy on each run's own spectrum); a run that differs only in
    --decorr-norm is its own curve, labelled by what differs; no run is dropped."""
    base = ["train", "--dataset", "gaussian", "--dataset-option", "dim=8", "--dataset-option", "train_per_class=20",
            "--dataset-option", "test_per_class=5", "--clients", "3", "--rounds", "1", "--local-epochs", "1",
            "--alpha", "0.5", "--reg", "feddecorr", "--store", str(tmp_path / "ck")]
    for extra in (["--seed", "0", "--seed", "1"], ["--decorr-norm", "paper"]):
        assert invoke(*base, *extra).exit_code == 0
    res = invoke("spectrum", "--store", str(tmp_path / "ck"), "--out", str(tmp_path / "fig"), "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert len({e["run"] for e in out["spectra"]}) == 3  # every run is there
    (agg,) = [a for a in out["seed_groups"] if a["model"] == "global"]
    assert agg["n"] == 2 and agg["label"] == "official scaling (n=2 seeds)"  # the one labeller's words
    ys = []
    for name in agg["runs"]:
        e = next(e for e in out["spectra"] if e["run"] == name and e["model"] == "global")
        sv = np.maximum(np.array(e["singular_values"]), max(e["floor"], np.finfo(np.float64).tiny))
        ys.append(np.log10(sv))
    k = min(len(y) for y in ys)
    ys = np.stack([y[:k] for y in ys])
    assert np.allclose(agg["log10_mean"][:k], ys.mean(0), atol=1e-12)
    assert np.allclose(agg["log10_std"][:k], ys.std(0), atol=1e-12)


@pytest.mark.precision("fp32")  # compares with fp32 numbers, run names or round-off
def test_logged_probe_spectra_equal_the_stored_models_and_change_no_checkpoint(store, tmp_path):
    """Training logs each round's global spectrum on its probe set (here the whole test set):
    it equals the analysis' spectrum of the stored global model (a float32 forward against a
    float64 one), and training without it stores the same bytes."""
    runs = {r.path.name: r for r in find_runs(store)}
    run = next(r for r in runs.values() if r.meta["alpha"] == "inf")
    probes = {e["round"]: e for e in run.metrics() if e.get("event") == "probe"}
    assert sorted(probes) == [0, 1, 2, 3]
    for r in (1, 3):
        sv, floor = direct_spectrum(run, r)
        got = np.array(probes[r]["probe_sv"])
        assert probes[r]["probe_n"] == 20 * 10 and len(got) == min(100, len(sv))
        assert np.allclose(got, sv[: len(got)].numpy(), rtol=1e-4, atol=1e-6 * float(sv[0]))
    res = invoke("spectrum", "--store", str(store), "--alpha", "inf", "--over-rounds", "all", "--logged", "--json",
                 "--out", str(tmp_path))
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["rounds"]
    assert [e["round"] for e in rows] == [1, 2, 3]
    assert rows[-1]["n_significant_top"] == int((np.array(probes[3]["probe_sv"]) > 1e-2).sum())
    from tests.commands.conftest import GAUSS

    out = tmp_path / "noprobe"
    assert invoke("train", *GAUSS, "--alpha", "inf", "--probe", "0", "--store", str(out)).exit_code == 0
    (other,) = find_runs(out)
    assert other.path.name == run.path.name  # --probe is not part of a run's identity
    assert (other.global_path(3)).read_bytes() == run.global_path(3).read_bytes()
    assert not [e for e in other.metrics() if e.get("event") == "probe"]
    res = invoke("spectrum", "--store", str(out), "--over-rounds", "all", "--logged", "--out", str(tmp_path))
    assert res.exit_code == 2 and "no probe spectra" in res.stderr
    res = invoke("spectrum", "--store", str(out), "--logged", "--out", str(tmp_path))
    assert res.exit_code == 2 and "give --over-rounds" in res.stderr


def test_a_layer_too_wide_to_decompose_is_refused_in_one_line():
    """A flattened convolutional layer (32,768 features) would take hours: refused, naming --layer."""
    import types

    import pytest
    import torch

    from collapse_lab.analysis.stored import MAX_FEATURES, spectrum_of
    from collapse_lab.errors import CollapseLabError

    with pytest.raises(CollapseLabError, match=r"--layer features.0: 8193 features an image; .* more than 8192"):
        spectrum_of(torch.zeros(4, MAX_FEATURES + 1), types.SimpleNamespace(layer="features.0"))
    sv, _ = spectrum_of(torch.eye(3, dtype=torch.float64))
    assert sv.shape == (3,)


def test_rounds_a_run_does_not_hold_are_named_with_those_it_holds(tmp_path):
    from tests.fixtures import tiny_train_args

    res = invoke("train", *tiny_train_args(epochs=1, rounds=7, clients=3, alpha="0.5"), "--keep-global", "every:3",
                 "--store", str(tmp_path / "ck"))
    assert res.exit_code == 0, res.output
    got = invoke("spectrum", "--store", str(tmp_path / "ck"), "--round", "2", "--out", str(tmp_path / "f"))
    # pruned by retention: named as pruned, with the rounds that have it
    assert got.exit_code == 2 and "round 2's global model was not kept (pruned by --keep-global" in got.stderr
    assert "[0, 3, 6, 7]" in got.stderr
    assert len(got.stderr.strip().splitlines()) == 1
    got = invoke("spectrum", "--store", str(tmp_path / "ck"), "--over-rounds", "all", "--out", str(tmp_path / "f"), "--json")
    assert got.exit_code == 0, got.output
    assert sorted({e["round"] for e in json.loads(got.stdout)["rounds"]}) == [3, 6, 7]


def test_the_library_functions_are_the_commands(store, tmp_path):
    """spectrum's and compare's numbers from Python (analysis.spectrum_view), no click."""
    from collapse_lab.analysis.features import FeatureSource
    from collapse_lab.analysis.select import select_runs
    from collapse_lab.analysis.select import iid_reference
    from collapse_lab.analysis.spectrum_view import compare, spectra

    cmd = json.loads(invoke("spectrum", "--store", str(store), "--alpha", "0.1", "--out", str(tmp_path / "c"),
                            "--json").stdout)
    selected = select_runs(store, ("0.1",))
    fs = FeatureSource(use_cache=False)
    rows, curves, agg = spectra(selected + iid_reference(store, selected, ("0.1",), ()), fs, None, 0, 0.01)
    assert rows == cmd["spectra"] and agg == cmd["seed_groups"]
    got, paths = compare(selected, fs, None, 0, 0.01, None, tmp_path / "py")
    want = json.loads(invoke("compare", "--store", str(store), "--alpha", "0.1", "--out", str(tmp_path / "c"),
                             "--json").stdout)["compare"]
    assert got == want and all(p.is_file() for p in paths)
