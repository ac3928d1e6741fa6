"""Every method and regularizer through the command line: training, stored method state,
resolved options in run.json, analysis of the stored checkpoints, and bad combinations."""
from __future__ import annotations

import json

import pytest
import torch
from click.testing import CliRunner

from collapse_lab.cli import cli
from collapse_lab.store import find_runs
from tests.fixtures import tiny_train_args

FAST = tiny_train_args(rounds=2, clients=3, alpha="0.5")

STATE = {  # what each method stores beside the checkpoints after a round
    "fedavg": (False, False), "fedprox": (False, False), "fednova": (False, False),
    "fedavgm": (True, False), "scaffold": (True, True), "fedetf": (True, False),
    "moon": (False, True), "fedbn": (False, False),  # the mlp has no BatchNorm: nothing is local
    "feddyn": (True, True), "fedadam": (True, False), "fedyogi": (True, False), "fedadagrad": (True, False),
    "fedopt": (True, False), "fedrs": (False, False), "fedproto": (True, False), "fedaws": (False, False),
    "fedmmd": (False, False),
}


BASELINES = {"feddyn", "fedadam", "fedyogi", "fedadagrad", "fedopt", "fedrs", "fedproto", "fedaws", "fedmmd"}


@pytest.mark.parametrize("method", [pytest.param(m, marks=pytest.mark.slow) if m in BASELINES else m
                                    for m in sorted(STATE)])  # the baselines' math is tested fast elsewhere
def test_every_method_trains_and_stores_its_state(tmp_path, method):
    out = tmp_path / "ck"
    res = CliRunner().invoke(cli, ["train", *FAST, "--method", method, "--reg", "feddecorr", "--store", str(out), "--json"])
    assert res.exit_code == 0, res.output
    (run,) = find_runs(out)
    meta = run.meta
    assert meta["status"] == "complete" and meta["method"] == method
    server, clients = STATE[method]
    for r in (1, 2):
        assert run.method_path(r).is_file() == server, (method, r)
        assert run.method_path(r, True).is_file() == clients, (method, r)
    s, c = run.load_method_state(2)
    assert all(torch.isfinite(v.double()).all() for v in {**s, **c}.values())
    # the analysis reads every method's checkpoints (MOON's head, FedETF's fixed classifier)
    res = CliRunner().invoke(cli, ["spectrum", "--store", str(out), "--json", "--out", str(tmp_path / "fig")])
    assert res.exit_code == 0, res.output


def test_options_are_resolved_into_the_run_and_feduv_beta(tmp_path):
    out = tmp_path / "ck"
    res = CliRunner().invoke(cli, ["train", *FAST, "--method", "fedavgm", "--server-momentum", "0.9", "--reg", "feduv",
                                   "--store", str(out)])
    assert res.exit_code == 0, res.output
    (run,) = find_runs(out)
    meta = run.meta
    assert meta["method_options"] == {"server_momentum": 0.9, "server_lr": 1.0}
    assert meta["reg_options"] == {"mu": 1.0, "lam": 2.0}  # gaussian default: 10 classes, lam = C/5
    assert meta["beta"] == 1.0
    assert run.path.name.startswith("gaussian_mlp_fedavgm_feduv1_")


def test_fedbn_keeps_batchnorm_per_client_with_a_bn_model(tmp_path, cifar_root):
    out = tmp_path / "ck"
    res = CliRunner().invoke(cli, ["train", "--dataset", "cifar10", "--data-root", str(cifar_root), "--model", "resnet20",
                                   "--method", "fedbn", "--rounds", "2", "--local-epochs", "1", "--clients", "2",
                                   "--alpha", "inf", "--store", str(out), "--min-size", "1"])
    assert res.exit_code == 0, res.output
    (run,) = find_runs(out)
    _, clients = run.load_method_state(2)
    assert any(k.startswith("0/") and k.endswith("running_mean") for k in clients)
    round2 = [e for e in run.metrics() if e["event"] == "round" and e["round"] == 2][0]
    assert len(round2["client_test_acc"]) == 2
    c0, g = run.load_client(2, 0), run.load_global(2)
    bn = [k for k in c0 if "bn" in k and k.endswith("running_mean")]
    assert bn and not all(torch.equal(c0[k], g[k]) for k in bn)


@pytest.mark.parametrize("args,msg", [
    (["--method", "fedprox", "--server-momentum", "0.5"], "method fedprox has no option server_momentum; its options: mu"),
    (["--method", "moon", "--method-option", "tau=0"], "tau > 0"),
    (["--method", "fedavgm", "--server-momentum", "1"], "[0, 1)"),
    (["--method", "fedetf", "--gmv-warmup", "0"], "--gmv-warmup must be >= 1"),
    (["--method", "fedetf", "--dataset-option", "num_classes=80", "--model", "linear"], "d = 64 < C = 80"),
    (["--reg", "structured-decov", "--reg-option", "groups=1"], "whole number >= 2"),
    (["--reg", "feduv", "--reg-option", "sigma=2"], "regularizer feduv has no option sigma"),
    (["--method-option", "mu"], "--method-option 'mu': write KEY=VALUE"),
    (["--method", "fedsgd"], "unknown method 'fedsgd'"),
])
def test_bad_method_and_regularizer_input(tmp_path, args, msg):
    res = CliRunner().invoke(cli, ["train", *FAST, *args, "--store", str(tmp_path / "ck")])
    assert res.exit_code == 2, res.output
    assert msg in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "ck").exists()


def test_fedbn_without_batchnorm_says_so_and_spectrum_filters_by_method(tmp_path):
    out = tmp_path / "ck"
    res = CliRunner().invoke(cli, ["train", *FAST, "--method", "fedbn", "--store", str(out)])
    assert res.exit_code == 0, res.output
    assert "note: fedbn: model mlp has no BatchNorm layer, so fedbn trains exactly as fedavg" in res.stderr
    res = CliRunner().invoke(cli, ["train", *FAST, "--store", str(out)])
    assert res.exit_code == 0 and "note:" not in res.stderr
    res = CliRunner().invoke(cli, ["spectrum", "--store", str(out), "--method", "fedbn", "--json",
                                   "--out", str(tmp_path / "fig")])
    assert res.exit_code == 0, res.output
    runs = {e["run"] for e in json.loads(res.stdout)["spectra"]}
    assert {r[:-9] for r in runs} == {"gaussian_mlp_fedbn_none_dir0.5_K3_s0"}
