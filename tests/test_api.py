"""The Python API: open stores and runs, representations of any model by a hook, the public
writer that records runs from other code, --model-factory, train() with the CLI's resolver."""
from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from click.testing import CliRunner

import collapse_lab as cl
from collapse_lab.cli import cli
from collapse_lab.data import load_dataset
from collapse_lab.errors import CollapseLabError


class TinyResNet(nn.Module):
    """A torchvision-style network: forward returns logits only; ``fc`` reads the pooled features."""

    def __init__(self, num_classes: int = 10, in_channels: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 6, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(6)
        self.conv2 = nn.Conv2d(6, 6, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(6)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(6, num_classes)

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = F.relu(h + self.bn2(self.conv2(h)))
        return self.fc(torch.flatten(self.pool(h), 1))


def tiny_factory(num_classes, input_shape):
    """What a user names with --model-factory tests.test_api:tiny_factory."""
    return TinyResNet(num_classes, input_shape[0])


def not_a_model(num_classes):
    return "a string"


def _by_hand(m: TinyResNet, x: torch.Tensor) -> torch.Tensor:
    """The penultimate representation written out, in float64, BatchNorm in eval form."""
    m = m.double().eval()

    def bn(b, h):
        return (h - b.running_mean[None, :, None, None]) / torch.sqrt(b.running_var[None, :, None, None] + b.eps) \
            * b.weight[None, :, None, None] + b.bias[None, :, None, None]

    h = F.relu(bn(m.bn1, F.conv2d(x, m.conv1.weight, padding=1)))
    h = F.relu(h + bn(m.bn2, F.conv2d(h, m.conv2.weight, padding=1)))
    return h.mean(dim=(2, 3))


def _trained_tiny(seed: int = 0) -> TinyResNet:
    torch.manual_seed(seed)
    m = TinyResNet()
    with torch.no_grad():  # running statistics away from their initial values
        for b in (m.bn1, m.bn2):
            b.running_mean.uniform_(-0.5, 0.5)
            b.running_var.uniform_(0.5, 2.0)
    return m


def test_features_of_a_logits_only_model_by_hook_equal_a_hand_forward():
    m = _trained_tiny()
    x = torch.randn(7, 1, 8, 8, dtype=torch.float64)
    want = _by_hand(copy.deepcopy(m), x)
    got = cl.features(m, x)  # default: the input of the last linear layer
    assert got.dtype == torch.float64 and got.shape == (7, 6)
    assert torch.allclose(got, want, rtol=0, atol=1e-12)
    assert torch.allclose(cl.features(m, x, layer="pool"), want, rtol=0, atol=1e-12)  # a named layer, flattened
    assert next(m.parameters()).dtype == torch.float32 and m.training  # the caller's model is untouched
    with pytest.raises(CollapseLabError, match="--layer 'poool': TinyResNet has no such module"):
        cl.features(m, x, layer="poool")


def _record(store, rounds=2, seed=0, model="tiny", **more):
    """A run recorded the way another training loop would: the public writer, every round."""
    ds = load_dataset("digits")
    parts = [list(range(k, len(ds.train_y), 3)) for k in range(3)]
    cfg = {"dataset": "digits", "model": model, "clients": 3, "rounds": rounds, "alpha": 0.5, "seed": seed, **more}
    w = cl.RunWriter(store, cfg, client_indices=parts, labels=ds.train_y.numpy(), num_classes=10,
                     source={"framework": "a test loop"})
    states = []
    for r in range(w.next_round, rounds + 1):
        g = _trained_tiny(seed * 100 + r)
        clients = {k: _trained_tiny(seed * 100 + r * 10 + k).state_dict() for k in range(3)}
        w.write_round(r, g.state_dict(), clients, {"test_acc": 0.1 * r})
        states.append(g)
    return w, states


@pytest.mark.slow
def test_the_writer_records_a_run_every_analysis_reads(tmp_path):
    store = tmp_path / "ck"
    w, states = _record(store)
    path = w.close()
    run = cl.open_run(path)
    assert run.status == "complete" and run.rounds == [1, 2] and run.clients(2) == [0, 1, 2]
    assert run.meta["format_version"] == "1.3" and run.meta["client_sizes"] == [479, 479, 479]
    assert [e["test_acc"] for e in run.metrics()] == [0.1, 0.2] and run.meta["source"] == {"framework": "a test loop"}
    # its representations through --model-factory equal the hook on the same parameters
    ds = load_dataset("digits")
    z = run.features(2, model_factory="tests.test_api:tiny_factory")
    direct = cl.features(states[-1], ds.to_float(ds.test_x, torch.float64))
    assert torch.equal(z, direct)
    sv, floor = run.spectrum(2, model_factory="tests.test_api:tiny_factory")
    assert torch.allclose(sv, torch.linalg.eigvalsh(torch.cov(direct.T, correction=0)).flip(0).clamp_min(0),
                          rtol=1e-10, atol=1e-14)
    # and the commands read it, given the factory by the user
    res = CliRunner().invoke(cli, ["spectrum", "--store", str(store), "--model-factory", "tests.test_api:tiny_factory",
                                   "--out", str(tmp_path / "fig"), "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["spectra"]
    glob = next(e for e in rows if e["model"] == "global")
    assert glob["n_significant"] == cl.n_significant(sv) and math.isclose(glob["effective_rank"],
                                                                          cl.effective_rank(sv, floor))


@pytest.mark.slow
def test_the_writer_resumes_refuses_out_of_order_and_newer_formats(tmp_path):
    store = tmp_path / "ck"
    w, _ = _record(store, rounds=3)
    w.close(complete=False)
    # the same options (an option left out is unknown, another run than one that names it)
    w2 = cl.RunWriter(store, {"dataset": "digits", "model": "tiny", "clients": 3, "rounds": 3, "alpha": 0.5, "seed": 0})
    assert w2.next_round == 4
    with pytest.raises(CollapseLabError, match="round 2 given, round 4 is next"):
        w2.write_round(2, _trained_tiny().state_dict())
    path = w2.close()
    with pytest.raises(CollapseLabError, match="unknown option"):
        cl.RunWriter(store, {"dataset": "digits", "colour": "red"})
    meta = json.loads((path / "run.json").read_text())
    (path / "run.json").write_text(json.dumps({**meta, "format_version": "2.0"}))
    res = CliRunner().invoke(cli, ["spectrum", "--run", str(path), "--model-factory", "tests.test_api:tiny_factory",
                                   "--out", str(tmp_path / "fig")])
    assert res.exit_code == 2 and "store format 2.0 is newer than this collapse-lab reads" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("spec,msg", [("tests.nothing_here:f", "cannot import tests.nothing_here"),
                                       ("tests.test_api:nope", "has no function nope"),
                                       ("tests.test_api", "write it as package.module:function"),
                                       ("tests.test_api:not_a_model", "returned str, not a torch.nn.Module")])
def test_bad_model_factories_are_one_line(tmp_path, spec, msg):
    w, _ = _record(tmp_path / "ck", rounds=1)
    w.close()
    res = CliRunner().invoke(cli, ["spectrum", "--store", str(tmp_path / "ck"), "--model-factory", spec,
                                   "--out", str(tmp_path / "fig")])
    assert res.exit_code == 2 and msg in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "fig").exists()


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
def test_train_from_python_stores_the_bytes_train_stores(tmp_path):
    opts = dict(dataset="gaussian", rounds=2, local_epochs=1, clients=3, alphas=[0.5], batch_size=16)
    runs = cl.train(tmp_path / "api", **opts)
    (run,) = runs
    assert run.status == "complete" and run.rounds == [0, 1, 2]
    res = CliRunner().invoke(cli, ["train", "--dataset", "gaussian", "--rounds", "2", "--local-epochs", "1",
                                   "--clients", "3", "--alpha", "0.5", "--batch-size", "16",
                                   "--store", str(tmp_path / "cli")])
    assert res.exit_code == 0, res.output
    other = tmp_path / "cli" / run.name
    assert _sha(run.dir.global_path(2)) == _sha(other / "round_2" / "global.safetensors")
    assert cl.configs(**opts)[0].run_name() == run.name
    assert [r.name for r in cl.open_store(tmp_path / "api", alpha="0.5")] == [run.name]
    assert cl.open_store(tmp_path / "api", alpha="0.1") == []


SUBSET = Path(__file__).resolve().parents[2] / "shared" / "data" / "cifar10-subset"  # real CIFAR-10 (../shared)


@pytest.mark.skipif(not (SUBSET / "cifar-10-batches-py").is_dir(), reason="needs ../shared/data/cifar10-subset")
def test_the_cpu_preset_trains_cifar10_as_the_catalogues_cpu_runs():
    """``train --preset cpu --dataset cifar10``: the small CNN on 1,000 training and 200 test
    images a class, 10 rounds of 2 epochs at lr 0.05: the very runs (same folder names) of the
    catalogue's cpu preset of ICLR Fig. 2; a flag given overrides the data set's cpu values."""
    from collapse_lab.analysis.catalogue import pick
    from collapse_lab.api import configs
    from collapse_lab.plan import Plan

    cifar_root = SUBSET
    got = configs(dataset="cifar10", preset="cpu", data_root=str(cifar_root))
    assert {(c.model, c.rounds, c.local_epochs, c.lr) for c in got} == {("cnn", 10, 2, 0.05)}
    assert {json.dumps(c.dataset_options, sort_keys=True) for c in got} == {
        '{"max_test_per_class": 200, "max_train_per_class": 1000}'}
    (fig2,) = pick(["feddecorr-fig2"], "figure")
    seed0 = {c.run_name() for c in Plan("cpu", data_root=str(cifar_root)).runs(fig2) if c.seed == 0}
    assert {c.run_name() for c in got} == seed0 and len(seed0) == 4
    mine = configs(dataset="cifar10", preset="cpu", data_root=str(cifar_root), model="resnet20",
                   dataset_options={"max_train_per_class": 300})
    assert {(c.model, json.dumps(c.dataset_options, sort_keys=True)) for c in mine} == {
        ("resnet20", '{"max_test_per_class": 200, "max_train_per_class": 300}')}
    # the paper preset is untouched: MobileNetV2 on every image
    assert {(c.model, json.dumps(c.dataset_options)) for c in configs(dataset="cifar10", data_root=str(cifar_root))} \
        == {("mobilenetv2", "{}")}


def test_the_writer_refuses_a_model_with_nan_weights_and_writes_nothing_of_it(tmp_path):
    store = tmp_path / "ck"
    ds = load_dataset("digits")
    parts = [list(range(k, len(ds.train_y), 3)) for k in range(3)]
    w = cl.RunWriter(store, {"dataset": "digits", "model": "tiny", "clients": 3, "rounds": 2, "alpha": 0.5},
                     client_indices=parts, labels=ds.train_y.numpy(), num_classes=10)
    bad = _trained_tiny(1).state_dict()
    name = next(k for k, v in bad.items() if v.is_floating_point())
    bad[name] = bad[name].clone()
    bad[name].view(-1)[0] = float("nan")
    with pytest.raises(cl.CollapseLabError, match=rf"global model of round 1: tensor '{name}' holds NaN"):
        w.write_round(1, bad, None, {"test_acc": 0.1})
    assert w.next_round == 1 and not list(store.rglob("global.safetensors"))


def test_an_analysis_of_a_recorded_run_without_its_factory_names_the_factory_not_model(tmp_path):
    w, _ = _record(tmp_path / "ck", rounds=1)
    w.close()
    for cmd in ("layers", "spectrum", "compare", "cka", "nc"):
        res = CliRunner().invoke(cli, [cmd, "--store", str(tmp_path / "ck"), "--out", str(tmp_path / "f")])
        errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error")]
        assert res.exit_code == 2 and errors == res.stderr.strip().splitlines(), res.output  # no warning or progress first
        assert "the run's model 'tiny' is not one collapse-lab builds" in errors[0] and "--model-factory" in errors[0]
        assert "--model:" not in res.stderr


def test_runs_that_differ_by_a_hash_alone_read_apart_by_their_label(tmp_path):
    from collapse_lab.api import open_store
    from tests.fixtures import invoke, tiny_train_args

    for lr in ("0.05", "0.02"):
        assert invoke("train", *tiny_train_args(rounds=1), "--alpha", "0.5", "--lr", lr, "--store", tmp_path).exit_code == 0
    labels = sorted(r.label for r in open_store(tmp_path, alpha="0.5"))
    assert len(labels) == 2 and "lr 0.02," in labels[0] and "lr 0.05," in labels[1]
    assert all(r.label in repr(r) for r in open_store(tmp_path))
