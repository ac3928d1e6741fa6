"""``collapse-lab units`` (issue 48, item 6): a client's local training replayed with and
without its regularizer; the first step's numbers against a hand computation."""
from __future__ import annotations

import json

import pytest
import torch
import torch.nn.functional as F

from collapse_lab.catalogue.unit_replay import layer_of, replay, unit_grad_norms
from collapse_lab.spectra.rank import dead_mask
from tests.fixtures import invoke


def test_unit_helpers_by_hand():
    g = torch.tensor([[3.0, 0.0], [4.0, 1.0]])
    assert unit_grad_norms(g).tolist() == [5.0, 1.0]
    assert dead_mask(torch.tensor([[0.0, 1.0, 0.0, 5.0], [0.0, 0.0, -2.0, 5.0]])).tolist() == [True, False, False, True]
    assert layer_of("head.0.weight") == "head.0" and layer_of("classifier.bias") == "classifier"


def test_one_full_batch_step_equals_a_hand_computation():
    """One epoch of one batch: the reported CE, beta R, layer gradient norms and unit
    gradients are those of the start model, computed here by autograd directly."""
    from collapse_lab.models import build_model
    from collapse_lab.regularizers.feddecorr import feddecorr_loss_official

    torch.manual_seed(0)
    model = build_model("cnn", 3, (1, 8, 8))
    x, y = torch.randn(16, 1, 8, 8), torch.randint(0, 3, (16,))
    start = {k: v.clone() for k, v in model.state_dict().items()}
    out = replay(model, x, y, lambda a, dt: a.to(dt), feddecorr_loss_official, 0.1, lr=0.05, momentum=0.9,
                 weight_decay=1e-5, batch_size=16, epochs=1, seed=0)
    ref = build_model("cnn", 3, (1, 8, 8))
    ref.load_state_dict(start)
    ref.train()
    logits, z = ref(x)
    ce, r = F.cross_entropy(logits, y), 0.1 * feddecorr_loss_official(z)
    e = out[1]
    assert e["ce"] == pytest.approx(float(ce.detach()), rel=1e-5)
    assert e["beta_reg"] == pytest.approx(float(r.detach()), rel=1e-5)
    g = torch.autograd.grad(r, [ref.head[0].weight, ref.head[0].bias], retain_graph=True)
    assert e["layers"]["head.0"]["grad_reg"] == pytest.approx(float(sum(t.pow(2).sum() for t in g).sqrt()), rel=1e-4)
    assert e["layers"]["classifier"]["grad_reg"] == 0.0  # R reads z, not the classifier
    gz = torch.autograd.grad(ce, z, retain_graph=True)[0]
    live = z.detach().var(0) > 1e-12 * z.detach().var(0).max()
    assert e["z_unit_grad_ce"] == pytest.approx(float(gz.pow(2).sum(0).sqrt()[live].median()), rel=1e-5)
    with torch.no_grad():
        ref.eval()
        zz = ref(x)[1]
        assert out[0]["dead"] == int((zz.var(0) <= 1e-12 * zz.var(0).max()).sum())


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """One FedDecorr run of 2 rounds (digits), for the bad-input cases."""
    root = tmp_path_factory.mktemp("units")
    res = invoke("train", "--rounds", "2", "--alpha", "0.05", "--reg", "feddecorr", "--store", root / "s")
    assert res.exit_code == 0, res.output
    (run,) = [p for p in (root / "s").iterdir() if (p / "run.json").is_file()]
    return run


@pytest.mark.parametrize("args,message", [
    (["--round", "0"], "--round 0: the run has rounds 1..2"),
    (["--round", "3"], "--round 3: the run has rounds 1..2"),
    (["--client", "10"], "--client 10: the run has clients 0..9"),
    (["--epochs", "0"], "--epochs 0: give 1 to 1000 local epochs"),
])
def test_bad_input_is_one_line(stored, args, message):
    got = invoke("units", "--run", stored, *args)
    assert got.exit_code == 2 and message in got.stderr and len(got.stderr.strip().splitlines()) == 1, got.output


def test_the_two_replays_differ_only_by_the_regularizer(stored):
    """From one start model: the replay without the regularizer carries no beta R and ends
    elsewhere; the one with it carries the run's beta R from its first epoch."""
    got = invoke("units", "--run", stored, "--json", "--epochs", "2")
    assert got.exit_code == 0, got.output
    out = json.loads(got.stdout)
    assert out["reg"] == "feddecorr" and out["beta"] == 0.1
    assert out["with"][0] == out["without"][0]  # the same start model (epoch 0: dead units only)
    assert all(e["beta_reg"] == 0.0 and e["z_unit_grad_reg"] == 0.0 for e in out["without"][1:])
    assert all(e["beta_reg"] > 0.0 for e in out["with"][1:])
    assert out["with"][1]["ce"] != out["without"][1]["ce"] or out["with"][2]["ce"] != out["without"][2]["ce"]


def test_a_run_without_a_regularizer_is_refused_in_one_line(tmp_path):
    res = invoke("train", "--rounds", "1", "--alpha", "0.05", "--local-epochs", "1", "--store", tmp_path / "s")
    assert res.exit_code == 0, res.output
    (run,) = [p for p in (tmp_path / "s").iterdir() if (p / "run.json").is_file()]
    got = invoke("units", "--run", run)
    assert got.exit_code == 2 and len(got.stderr.strip().splitlines()) == 1, got.output
    assert "--run" in got.stderr and "without a regularizer" in got.stderr and got.stdout == ""
