"""``collapse-lab layers`` (issue 50 item 1): per-layer measures for the global and a client's
model over rounds, the representation's row equal to what ``spectrum`` reports for the same
model (two extraction paths), the heatmap written, bad input one line."""
from __future__ import annotations

import json
import math

import pytest

from tests.fixtures import invoke, tiny_train_args

pytestmark = pytest.mark.slow  # trains a store, then three commands read it (end to end)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("layers")
    res = invoke("train", *tiny_train_args(epochs=1, rounds=3, clients=3, alpha="0.5"), "--keep-local", "all",
                 "--store", str(root / "ck"))
    assert res.exit_code == 0, res.output
    return root


def test_layers_json_and_heatmap(store):
    res = invoke("layers", "--store", str(store / "ck"), "--over-rounds", "all", "--out", str(store / "f"), "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    rows = out["layers"]
    layers = list(dict.fromkeys(e["layer"] for e in rows))
    assert layers[-1] == "z" and len(layers) >= 2
    # 3 rounds x (global + client 0) x every layer
    assert len(rows) == 3 * 2 * len(layers)
    assert all(e["n_significant"] <= e["width"] and 1 <= e["effective_rank"] <= e["width"] + 1e-9 for e in rows)
    # the heatmap and the layers' spectra at the first and last rounds, each as pdf and png
    assert all(p.endswith((".png", ".pdf")) for p in out["figures"]) and len(out["figures"]) == 4
    assert out["computed"] == 6  # 3 rounds x 2 models, one forward pass each
    again = invoke("layers", "--store", str(store / "ck"), "--over-rounds", "all", "--out", str(store / "f"), "--json")
    assert json.loads(again.stdout)["computed"] == 0 and json.loads(again.stdout)["layers"] == rows  # the cache
    # a float32 forward (the covariance still float64): its own cache entries, the same numbers to float32's
    f32 = invoke("layers", "--store", str(store / "ck"), "--over-rounds", "all", "--out", str(store / "f"), "--json",
                 "--feature-dtype", "float32")
    got = json.loads(f32.stdout)
    assert got["computed"] == 6 and [e["layer"] for e in got["layers"]] == [e["layer"] for e in rows]
    assert all(math.isclose(a["effective_rank"], b["effective_rank"], rel_tol=1e-4)
               for a, b in zip(got["layers"], rows))
    spec = invoke("spectrum", "--store", str(store / "ck"), "--out", str(store / "g"), "--json")
    assert spec.exit_code == 0, spec.output
    by = {e["model"]: e for e in json.loads(spec.stdout)["spectra"]}  # round 3, global and client_0
    for model in ("global", "client_0"):
        z = next(e for e in rows if e["layer"] == "z" and e["round"] == 3 and e["model"] == model)
        assert z["n_significant"] == by[model]["n_significant"]
        assert math.isclose(z["effective_rank"], by[model]["effective_rank"], rel_tol=1e-9)
        assert math.isclose(z["participation_ratio"], by[model]["participation_ratio"], rel_tol=1e-9)


def test_layers_bad_input_is_one_line(store):
    for args, msg in ((["--layer", "nope"], "--layer 'nope'"), (["--over-rounds", "2", "--round", "1"], "--round has no effect"),
                      (["--over-rounds", "2:3", "--spectra-at", "1"], "--spectra-at '1'")):
        res = invoke("layers", "--store", str(store / "ck"), "--out", str(store / "h"), *args)
        assert res.exit_code == 2 and msg in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.output


def test_the_api_gives_the_commands_numbers(store):
    """``Run.layers`` (the Python API) and the command read the same spectra."""
    import collapse_lab as cl
    from collapse_lab.spectra.measures import Inputs, value

    res = invoke("layers", "--store", str(store / "ck"), "--out", str(store / "f2"), "--json")
    assert res.exit_code == 0, res.output
    (run,) = cl.open_store(str(store / "ck"))
    last = int(run.meta["rounds_complete"])
    every = json.loads(res.stdout)["layers"]
    # by default every round from the initial model (round 0: where collapse starts shows), the
    # client's from round 1
    assert sorted({e["round"] for e in every if e["model"] == "global"}) == list(range(last + 1))
    assert sorted({e["round"] for e in every if e["model"] != "global"}) == list(range(1, last + 1))
    rows = [e for e in every if e["model"] == "global" and e["round"] == last]
    got = run.layers()
    assert [e["layer"] for e in rows] == list(got)
    for e in rows:
        sv, floor, width = got[e["layer"]]
        assert width == e["width"] and math.isclose(value("effective_rank", Inputs(sv, floor)), e["effective_rank"],
                                                    rel_tol=1e-12)


def test_rounds_a_retention_setting_pruned_are_skipped_with_a_warning(tmp_path):
    res = invoke("train", *tiny_train_args(epochs=1, rounds=3, clients=3, alpha="0.5"), "--keep-global", "every:2",
                 "--store", str(tmp_path / "ck"))
    assert res.exit_code == 0, res.output
    res = invoke("layers", "--store", str(tmp_path / "ck"), "--over-rounds", "all", "--out", str(tmp_path / "f"), "--json")
    assert res.exit_code == 0, res.output
    assert sorted({e["round"] for e in json.loads(res.stdout)["layers"]}) == [2, 3]  # round 1 was pruned
    assert "rounds [1] are not stored (pruned by --keep-global, or never recorded); skipped" in res.stderr
    res = invoke("layers", "--store", str(tmp_path / "ck"), "--over-rounds", "1", "--out", str(tmp_path / "f"))
    assert res.exit_code == 2 and "holds none of rounds [1]" in res.stderr and "it holds [0, 2, 3]" in res.stderr


def test_a_skewed_alpha_is_read_beside_the_stores_iid_twin(tmp_path):
    """``layers --alpha 0.5`` on a store with the same settings at alpha inf reads that run as
    the reference (its rows, the relative panel), says so, and reads no other run."""
    store = tmp_path / "ck"
    args = tiny_train_args(epochs=1, rounds=2, clients=3)
    assert invoke("train", *args, "--alpha", "0.5", "--alpha", "inf", "--store", str(store)).exit_code == 0
    assert invoke("train", *args, "--alpha", "inf", "--lr", "0.02", "--store", str(store)).exit_code == 0  # other settings
    res = invoke("layers", "--store", str(store), "--alpha", "0.5", "--out", str(tmp_path / "f"), "--json")
    assert res.exit_code == 0, res.output
    assert "IID run(s) of the same settings read as the reference (alpha inf: 1 run(s))" in res.stderr
    runs = {e["run"] for e in json.loads(res.stdout)["layers"]}
    assert len(runs) == 2 and sum("dir0.5" in r for r in runs) == 1 and sum("dirinf" in r for r in runs) == 1
    alone = invoke("layers", "--store", str(store), "--alpha", "0.5", "--alpha", "inf", "--out", str(tmp_path / "g"),
                   "--json")
    assert "reference" not in alone.stderr  # alpha inf named: the user's choice


def test_logged_layers_take_an_iid_twin_only_where_it_logged_them(tmp_path):
    """``layers --logged --alpha 0.5``: the IID twin trained without --probe-layers is no
    reference (it logged nothing) and no error; one that logged its layers is read."""
    store = tmp_path / "ck"
    args = tiny_train_args(epochs=1, rounds=2, clients=3)
    assert invoke("train", *args, "--alpha", "0.5", "--probe-layers", "--store", str(store)).exit_code == 0
    assert invoke("train", *args, "--alpha", "inf", "--store", str(store)).exit_code == 0
    cmd = ["layers", "--store", str(store), "--alpha", "0.5", "--logged", "--out", str(tmp_path / "f"), "--json"]
    res = invoke(*cmd)
    assert res.exit_code == 0, res.output
    assert {e["run"] for e in json.loads(res.stdout)["layers"]} == {p.name for p in store.glob("*dir0.5*")}
    assert invoke("train", *args, "--alpha", "inf", "--probe-layers", "--overwrite", "--store", str(store)).exit_code == 0
    res = invoke(*cmd)
    assert res.exit_code == 0 and "read as the reference (alpha inf: 1 run(s))" in res.stderr, res.output
    assert len({e["run"] for e in json.loads(res.stdout)["layers"]}) == 2


def test_the_spectra_grid_draws_a_clients_first_round_where_the_column_is_round_0(store, tmp_path, monkeypatch):
    """A client has no round-0 model: the grid's round-0 column shows client 0's first round
    (titled so), so no panel is left empty; the global model's column is round 0 itself."""
    from collapse_lab.analysis.plots import layers as layer_plots

    seen, real = {}, layer_plots.layer_spectra_figure

    def spy(spectra, tau, title, top=100):
        seen["spectra"] = spectra
        fig = real(spectra, tau, title, top)
        seen["titles"] = [ax.get_title() for ax in fig.axes if ax.get_title()]
        seen["empty"] = [ax for ax in fig.axes if not ax.lines]
        return fig

    monkeypatch.setattr(layer_plots, "layer_spectra_figure", spy)
    res = invoke("layers", "--store", str(store / "ck"), "--out", str(tmp_path / "f"))
    assert res.exit_code == 0, res.output
    cols = {(e["model"], e["column"], e["round"]) for e in seen["spectra"]}
    assert ("global", 0, 0) in cols and ("client_0", 0, 1) in cols and ("global", 3, 3) in cols and ("client_0", 3, 3) in cols
    assert not seen["empty"] and any(t.endswith("client_0, round 1") for t in seen["titles"])
