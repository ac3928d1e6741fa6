"""Each FL method's defining math against an independent computation: FedETF, MOON and
FedBN, whose clients change the model or keep local parts."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from collapse_lab.errors import CollapseLabError
from collapse_lab.methods.aggregate import weighted_average
from collapse_lab.methods import EvalData, build_run_model
from collapse_lab.methods.fedbn import batchnorm_keys
from collapse_lab.methods.addons import simplex_etf
from collapse_lab.methods.moon import moon_loss
from tests.training.methods_common import close, data, make, run_round


# -- FedETF --------------------------------------------------------------------------


@pytest.mark.parametrize("d,c", [(10, 10), (128, 10), (64, 3)])
def test_simplex_etf_geometry(d, c):
    w = simplex_etf(d, c, torch.Generator().manual_seed(1))
    norms = w.norm(dim=0)
    assert torch.allclose(norms, torch.ones(c, dtype=torch.float64), atol=1e-12)
    cos = (w.T @ w) / torch.outer(norms, norms)
    off = cos[~torch.eye(c, dtype=torch.bool)]
    assert torch.allclose(off, torch.full_like(off, -1.0 / (c - 1)), atol=1e-12)
    # tight frame: W W^T = C/(C-1) P (I - 11^T/C) P^T has C-1 equal nonzero eigenvalues
    ev = torch.linalg.eigvalsh(w @ w.T)
    assert torch.allclose(ev[-(c - 1):], torch.full((c - 1,), c / (c - 1), dtype=torch.float64), atol=1e-10)


def test_fedetf_classifier_is_the_frozen_etf_and_gets_no_gradient():
    cfg, model, method = make("fedetf")
    w = model.classifier.weight.detach().double()
    cos = F.normalize(w, dim=1) @ F.normalize(w, dim=1).T
    assert torch.allclose(w.norm(dim=1), torch.ones(3, dtype=torch.float64), atol=1e-6)
    assert torch.allclose(cos[0, 1], torch.tensor(-0.5, dtype=torch.float64), atol=1e-6)
    assert torch.count_nonzero(model.classifier.bias) == 0
    before = model.classifier.weight.detach().clone()
    x, y = data()
    logits, z = model(x)
    F.cross_entropy(logits, y).backward()
    assert model.classifier.weight.grad is None and model.classifier.bias.grad is None
    assert model.body[1].weight.grad is not None
    new, _ = run_round(method, cfg, model, {k: v.clone() for k, v in model.state_dict().items()}, 1, [data(16, 1)])
    assert torch.equal(new["classifier.weight"], before)
    with pytest.raises(CollapseLabError, match="d = 4 < C = 5"):
        simplex_etf(4, 5, torch.Generator())


def test_fedetf_memory_vectors_are_class_means_and_shift_the_logits():
    cfg, model, method = make("fedetf", method_options={"gmv_warmup": 2, "gmv_weight": 0.7})
    assert method.opts["gmv_warmup"] == 2
    x2, y2 = data(16, 2)
    datasets = [data(16, 1), (x2, y2 % 2)]  # client 1 holds no sample of class 2
    g0 = {k: v.clone() for k, v in model.state_dict().items()}
    # round 1: no memory vectors in use yet; after it, mu_j = mean over clients holding j
    # of the client's mean last-epoch representation of class j
    hooks = method.client_start(0, 1, model, g0)
    assert hooks.mu is None
    g1, results = run_round(method, cfg, model, g0, 1, datasets)
    expected = torch.zeros(3, model.feature_dim, dtype=torch.float64)
    count = torch.zeros(3)
    for k, (x, y) in enumerate(datasets):
        ref = build_run_model(cfg, 3, (5,))
        ref.load_state_dict(g0)
        zs, ys = [], []  # replay the client's single epoch to get the representations it saw
        from collapse_lab.training.local import batches
        for idx in batches(len(y), 8, torch.Generator().manual_seed(k)):
            zs.append(ref(x[idx])[1].detach())
            ys.append(y[idx])
            lg, _ = ref(x[idx])
            loss = F.cross_entropy(lg, y[idx])
            gr = torch.autograd.grad(loss, [p for p in ref.parameters() if p.requires_grad])
            with torch.no_grad():
                for p, gg in zip([p for p in ref.parameters() if p.requires_grad], gr):
                    p -= cfg.lr * gg
        zc, yc = torch.cat(zs).double(), torch.cat(ys)
        for j in range(3):
            if (yc == j).any():
                expected[j] += zc[yc == j].mean(0)
                count[j] += 1
    assert count.tolist() == [2, 2, 1]
    expected /= count[:, None].double()
    assert torch.allclose(method.mu, expected, atol=1e-5)
    # round 2 (>= warm-up): logits are classifier(z + 0.7 mu_y)
    hooks = method.client_start(0, 2, model, g1)
    x, y = datasets[0]
    logits, z = model(x)
    shifted = hooks.logits(model, z, y, logits)
    ref = (z + 0.7 * method.mu[y].float()) @ model.classifier.weight.T
    assert torch.allclose(shifted, ref, atol=1e-5)


# -- MOON ----------------------------------------------------------------------------


def test_moon_loss_matches_hand_computation():
    p = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    pg = torch.tensor([[1.0, 1.0], [0.0, 1.0]])
    pp = torch.tensor([[-1.0, 0.0], [1.0, 1.0]])
    tau = 0.5
    vals = []
    for i in range(2):
        cos = lambda a, b: float(np.dot(a, b) / np.linalg.norm(a) / np.linalg.norm(b))  # noqa: E731
        sg, sp = cos(p[i].numpy(), pg[i].numpy()), cos(p[i].numpy(), pp[i].numpy())
        vals.append(-math.log(math.exp(sg / tau) / (math.exp(sg / tau) + math.exp(sp / tau))))
    assert moon_loss(p, pg, pp, tau).item() == pytest.approx(np.mean(vals), rel=1e-6)
    # tau is used: a different tau gives a different value
    assert moon_loss(p, pg, pp, 1.0).item() != pytest.approx(np.mean(vals), rel=1e-3)


def test_moon_previous_model_persists_and_the_head_is_part_of_the_model():
    cfg, model, method = make("moon")
    assert any(k.startswith("moon_head.") for k in model.state_dict())
    g0 = {k: v.clone() for k, v in model.state_dict().items()}
    hooks = method.client_start(0, 1, model, g0)
    x, y = data()
    # round 1: previous model = global model -> both similarities equal, loss = mu * log 2
    assert hooks.loss(model, x, y, *model(x)).item() == pytest.approx(math.log(2), rel=1e-5)
    g1, results = run_round(method, cfg, model, g0, 1, [data(16, 1), data(16, 2)])
    assert close(method.prev[1], results[1].state, atol=0)
    hooks = method.client_start(1, 2, model, g1)  # the client's own previous model travels in its hooks
    assert close(hooks.prev.state_dict(), results[1].state, atol=0)


# -- FedBN ---------------------------------------------------------------------------


class BNNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(5, 8), nn.BatchNorm1d(8), nn.ReLU())
        self.feature_dim = 8
        self.classifier = nn.Linear(8, 3)

    def forward(self, x):
        z = self.body(x)
        return self.classifier(z), z


def test_fedbn_keeps_batchnorm_local_and_averages_the_rest():
    torch.manual_seed(0)
    cfg, model, method = make("fedbn", model=BNNet())
    keys = batchnorm_keys(model)
    assert sorted(keys) == sorted(f"body.1.{k}" for k in ("weight", "bias", "running_mean", "running_var",
                                                          "num_batches_tracked"))
    g0 = {k: v.clone() for k, v in model.state_dict().items()}
    g1, results = run_round(method, cfg, model, g0, 1, [data(16, 1), data(16, 2)])
    avg = weighted_average([r.state for r in results], [16, 16])
    assert close({k: g1[k] for k in g1 if k not in keys}, avg)
    for k in (0, 1):
        method.client_start(k, 2, model, g1)
        sd = model.state_dict()
        for n in keys:  # own BatchNorm back in place
            assert torch.equal(sd[n], results[k].state[n]), n
        for n in g1:
            if n not in keys:
                assert torch.equal(sd[n], g1[n]), n
    assert not torch.equal(results[0].state["body.1.running_mean"], results[1].state["body.1.running_mean"])
    # personalised evaluation: client k's model on its own domain's test samples
    x, y = data(20, 3)
    dom = torch.tensor([0] * 10 + [1] * 10)
    ev = method.evaluate(model, g1, EvalData(x, y, lambda t: t, 64, dom, [[0], [1]]))
    ref = []
    for k in (0, 1):
        model.load_state_dict({**g1, **method.local[k]})
        model.eval()
        ref.append((model(x[dom == k])[0].argmax(1) == y[dom == k]).float().mean().item())
    assert ev["client_test_acc"] == pytest.approx(ref) and ev["test_acc"] == pytest.approx(np.mean(ref))
