"""TensorBoard event files read back with TensorBoard's own reader equal metrics.jsonl."""
from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

pytest.importorskip("tensorboard")

from collapse_lab.cli import cli  # noqa: E402
from collapse_lab.store import find_runs  # noqa: E402


def _read(folder):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(folder), size_guidance={"scalars": 0, "histograms": 0})
    acc.Reload()
    return acc


@pytest.mark.slow
def test_logged_values_equal_the_metrics_file(tmp_path):
    store, logs = tmp_path / "ck", tmp_path / "tb"
    res = CliRunner().invoke(cli, ["train", "--dataset", "gaussian", "--rounds", "2", "--local-epochs", "2",
                                   "--clients", "3", "--alpha", "0.5", "--store", str(store), "--log", "tensorboard",
                                   str(logs)])
    assert res.exit_code == 0, res.output
    (run,) = find_runs(store)
    acc = _read(logs / run.path.name)
    events = run.metrics()
    rounds = [e for e in events if e["event"] == "round"]
    got = {s.step: s.value for s in acc.Scalars("global/test_acc")}  # float32 in the event file
    assert sorted(got) == [0, 1, 2] and all(math.isclose(got[e["round"]], e["test_acc"], rel_tol=1e-6) for e in rounds)
    local = [e for e in events if e["event"] == "local_epoch" and e["client"] == 1]
    # every tag's step is the round; the local epochs, counted over the run, under their own tag
    tb = {s.step: s.value for s in acc.Scalars("client_1/loss")}
    assert tb.keys() == {1, 2} and all(math.isclose(tb[e["round"]], e["loss"], rel_tol=1e-6) for e in local if e["epoch"] == 2)
    tb = {s.step: s.value for s in acc.Scalars("client_1/loss_by_epoch")}
    assert sorted(tb) == [1, 2, 3, 4] == sorted((e["round"] - 1) * 2 + e["epoch"] for e in local)
    assert all(math.isclose(tb[(e["round"] - 1) * 2 + e["epoch"]], e["loss"], rel_tol=1e-6) for e in local)
    probes = [e for e in events if e["event"] == "probe"]
    dead = {s.step: s.value for s in acc.Scalars("spectrum/dead_units")}
    assert dead == {e["round"]: e["probe_dead_units"] for e in probes}
    pr = {s.step: s.value for s in acc.Scalars("spectrum/participation_ratio")}  # a measure of the registry
    assert all(math.isclose(pr[e["round"]], e["probe_participation_ratio"], rel_tol=1e-6) for e in probes)
    assert all(math.isclose(e["probe_participation_ratio"], sum(e["probe_sv"]) ** 2 / sum(v * v for v in e["probe_sv"]),
                            rel_tol=1e-9) for e in probes if e["probe_dim"] <= len(e["probe_sv"]))
    n_tau = {s.step: s.value for s in acc.Scalars("spectrum/n_significant_top")}
    assert n_tau == {e["round"]: sum(v > 1e-2 for v in e["probe_sv"]) for e in probes}
    hist = acc.Histograms("spectrum/log10_singular_values")
    assert [h.step for h in hist] == [e["round"] for e in probes]
    assert all(h.histogram_value.num == len(e["probe_sv"]) for h, e in zip(hist, probes))
    # export of an existing store writes the same scalars
    res = CliRunner().invoke(cli, ["export", "tensorboard", "--store", str(store), "--out", str(tmp_path / "tb2"),
                                   "--json"])
    assert res.exit_code == 0, res.output
    (folder,) = json.loads(res.stdout)["folders"]
    again = _read(folder)
    assert {(s.step, s.value) for s in again.Scalars("global/test_acc")} == {(s.step, s.value)
                                                                              for s in acc.Scalars("global/test_acc")}


def test_bad_log_kind_is_one_line(tmp_path):
    res = CliRunner().invoke(cli, ["train", "--rounds", "1", "--store", str(tmp_path / "ck"), "--log", "mlflow",
                                   str(tmp_path / "x")])
    assert res.exit_code == 2 and "the kinds are tensorboard and wandb" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and not (tmp_path / "ck").exists()


def test_a_log_kind_whose_package_is_missing_is_one_line(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "wandb", None)  # import wandb raises ImportError, as where it is not installed
    res = CliRunner().invoke(cli, ["train", "--rounds", "1", "--store", str(tmp_path / "ck"), "--log", "wandb",
                                   str(tmp_path / "w")])
    assert res.exit_code == 2 and "pip install 'collapse-lab[wandb]'" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and not (tmp_path / "ck").exists() and not (tmp_path / "w").exists()
