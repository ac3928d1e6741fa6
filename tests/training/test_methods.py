"""Each FL method's defining math against an independent computation: FedProx, SCAFFOLD,
FedNova, FedAvgM and the method options (FedETF, MOON, FedBN: test_methods_local.py)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from collapse_lab.config import RunConfig
from collapse_lab.errors import CollapseLabError
from collapse_lab.methods.aggregate import momentum_norm
from collapse_lab.methods import METHODS, ClientResult, build_run_model
from collapse_lab.methods.fedprox import proximal_term
from collapse_lab.training.trainer import train_client
from tests.training.methods_common import close, data, make, run_round


# -- FedProx -------------------------------------------------------------------------


def test_fedprox_gradient_is_ce_gradient_plus_mu_times_displacement():
    cfg, model, method = make("fedprox", method_options={"mu": 0.3})
    global_state = {k: v.clone() for k, v in model.state_dict().items()}
    hooks = method.client_start(0, 1, model, global_state)
    with torch.no_grad():  # move away from the anchor so the prox gradient is not zero
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    x, y = data()
    logits, z = model(x)
    ce = F.cross_entropy(logits, y)
    params = list(model.parameters())
    g_ce = torch.autograd.grad(ce, params, retain_graph=True)
    g_tot = torch.autograd.grad(ce + hooks.loss(model, x, y, logits, z), params)
    for (name, p), gc, gt in zip(model.named_parameters(), g_ce, g_tot):
        assert torch.allclose(gt, gc + 0.3 * (p.detach() - global_state[name]), atol=1e-6), name
    # and the value: mu/2 sum ||w - w_g||^2
    ref = 0.15 * sum(((p.detach() - global_state[n]) ** 2).sum() for n, p in model.named_parameters())
    assert proximal_term(model, hooks.anchor, 0.3).item() == pytest.approx(ref.item(), rel=1e-6)


def test_fedprox_term_is_zero_only_at_the_anchor():
    cfg, model, method = make("fedprox")
    global_state = {k: v.clone() for k, v in model.state_dict().items()}
    hooks = method.client_start(0, 1, model, global_state)
    x, y = data()
    assert hooks.loss(model, x, y, *model(x)).item() == 0.0
    with torch.no_grad():
        next(model.parameters()).add_(1.0)
    assert hooks.loss(model, x, y, *model(x)).item() > 0.0


# -- SCAFFOLD ------------------------------------------------------------------------


def test_scaffold_zero_control_variates_one_step_equals_fedavg():
    datasets = [data(8, 1), data(8, 2)]  # batch 8: one local step each
    cfg, model, scaffold = make("scaffold")
    g0 = {k: v.clone() for k, v in model.state_dict().items()}
    s_new, s_res = run_round(scaffold, cfg, model, g0, 1, datasets)
    _, _, fedavg = make("fedavg", model=model)
    a_new, a_res = run_round(fedavg, cfg, model, g0, 1, datasets)
    assert all(r.steps == 1 for r in s_res)
    assert close(s_new, a_new, atol=0)


def test_scaffold_control_variate_is_the_gradient_and_corrects_the_next_step():
    datasets = [data(8, 1), data(8, 2)]
    cfg, model, scaffold = make("scaffold")
    x0 = {k: v.clone() for k, v in model.state_dict().items()}
    # independent route: the full-batch gradient of each client at x0
    grads = []
    for x, y in datasets:
        ref = build_run_model(cfg, 3, (5,))
        ref.load_state_dict(x0)
        logits, _ = ref(x)
        grads.append(dict(zip([n for n, _ in ref.named_parameters()],
                              torch.autograd.grad(F.cross_entropy(logits, y), list(ref.parameters())))))
    x1, _ = run_round(scaffold, cfg, model, x0, 1, datasets)
    for k in range(2):  # option II after one plain SGD step: c_k = (x - y_k) / lr = g_k(x)
        for n, g in grads[k].items():
            assert torch.allclose(scaffold.ck[k][n].float(), g, atol=1e-5), n
    for n in grads[0]:  # c = (1/N) sum_k (c_k - 0)
        assert torch.allclose(scaffold.c[n].float(), (grads[0][n] + grads[1][n]) / 2, atol=1e-5)
    # round 2, client 0: y = x1 - lr (g_0(x1) - c_0 + c)
    x, y = datasets[0]
    ref = build_run_model(cfg, 3, (5,))
    ref.load_state_dict(x1)
    g = torch.autograd.grad(F.cross_entropy(ref(x)[0], y), list(ref.parameters()))
    expected = {n: x1[n] - cfg.lr * (gn - scaffold.ck[0][n].float() + scaffold.c[n].float())
                for (n, _), gn in zip(ref.named_parameters(), g)}
    hooks = scaffold.client_start(0, 2, model, x1)
    train_client(model, x, y, lambda t: t, epochs=1, batch_size=8, lr=cfg.lr, momentum=0.0, weight_decay=0.0,
                 reg=None, beta=0.0, generator=torch.Generator().manual_seed(0), hooks=hooks)
    for n, p in model.named_parameters():
        assert torch.allclose(p.detach(), expected[n], atol=1e-6), n


def test_scaffold_state_round_trip():
    cfg, model, scaffold = make("scaffold")
    run_round(scaffold, cfg, model, {k: v.clone() for k, v in model.state_dict().items()}, 1, [data(8, 1), data(8, 2)])
    _, _, other = make("scaffold", model=model)
    other.load_state(scaffold.server_state(), scaffold.client_state())
    assert close(other.server_state(), scaffold.server_state(), atol=0)
    assert close(other.client_state(), scaffold.client_state(), atol=0)


# -- FedNova -------------------------------------------------------------------------


def test_fednova_equal_steps_without_momentum_equals_fedavg():
    datasets = [data(16, 1), data(16, 2)]  # 2 steps each
    cfg, model, nova = make("fednova")
    g0 = {k: v.clone() for k, v in model.state_dict().items()}
    n_new, n_res = run_round(nova, cfg, model, g0, 1, datasets)
    _, _, fedavg = make("fedavg", model=model)
    a_new, _ = run_round(fedavg, cfg, model, g0, 1, datasets)
    assert [r.steps for r in n_res] == [2, 2]
    assert close(n_new, a_new, atol=1e-7)


def test_fednova_unequal_steps_by_hand_and_momentum_norm():
    # momentum_norm equals the released code's per-step counter
    for tau, rho in ((1, 0.9), (7, 0.9), (25, 0.5), (10, 0.0)):
        counter, vec = 0.0, 0.0
        for _ in range(tau):
            counter = counter * rho + 1
            vec += counter
        assert momentum_norm(tau, rho) == pytest.approx(vec, rel=1e-12)
    cfg, model, nova = make("fednova", momentum=0.9)
    g = {"w": torch.tensor([1.0, 2.0])}
    nova.keys = ["w"]
    states = [{"w": torch.tensor([0.0, 1.0])}, {"w": torch.tensor([3.0, -1.0])}]
    results = [ClientResult(0, states[0], 30, 2), ClientResult(1, states[1], 10, 6)]
    out = nova.aggregate(1, g, results)
    a = [momentum_norm(2, 0.9), momentum_norm(6, 0.9)]
    p = [0.75, 0.25]
    tau_eff = p[0] * a[0] + p[1] * a[1]
    d = [p[i] * (np.array([1.0, 2.0]) - states[i]["w"].numpy()) / a[i] for i in range(2)]
    ref = np.array([1.0, 2.0]) - tau_eff * (d[0] + d[1])
    assert np.allclose(out["w"].numpy(), ref, atol=1e-6)
    assert not np.allclose(ref, 0.75 * states[0]["w"].numpy() + 0.25 * states[1]["w"].numpy())


def test_fednova_a_client_that_took_no_step_adds_no_direction_and_all_idle_changes_nothing():
    """A one-sample client of a BatchNorm model (or any client short of one batch) takes no
    step and returns the global model: its term of Eq. 7 is 0/0, taken as 0, and a_k = 0
    still enters tau_eff (a smoke run of Table 1 failed on it with a ValueError)."""
    cfg, model, nova = make("fednova", momentum=0.9)
    g = {"w": torch.tensor([1.0, 2.0])}
    nova.keys = ["w"]
    moved, idle = {"w": torch.tensor([0.0, 1.0])}, {"w": g["w"].clone()}
    out = nova.aggregate(1, g, [ClientResult(0, moved, 30, 3), ClientResult(1, idle, 10, 0)])
    p, a = [0.75, 0.25], momentum_norm(3, 0.9)
    tau_eff = p[0] * a + p[1] * 0.0
    ref = np.array([1.0, 2.0]) - tau_eff * p[0] * (np.array([1.0, 2.0]) - np.array([0.0, 1.0])) / a
    assert np.allclose(out["w"].numpy(), ref, atol=1e-6) and np.isfinite(out["w"].numpy()).all()
    assert np.allclose(ref, [1.0 - 0.75 ** 2, 2.0 - 0.75 ** 2])  # the hand value: 0.75 of 0.75 of the move
    still = nova.aggregate(1, g, [ClientResult(0, idle, 30, 0), ClientResult(1, idle, 10, 0)])
    assert torch.equal(still["w"], g["w"])


# -- FedAvgM -------------------------------------------------------------------------


def test_fedavgm_momentum_zero_equals_fedavg_and_two_rounds_by_hand():
    datasets = [data(16, 1), data(16, 2)]
    cfg, model, m0 = make("fedavgm", method_options={"server_momentum": 0.0})
    g0 = {k: v.clone() for k, v in model.state_dict().items()}
    new0, _ = run_round(m0, cfg, model, g0, 1, datasets)
    _, _, fedavg = make("fedavg", model=model)
    avg, _ = run_round(fedavg, cfg, model, g0, 1, datasets)
    assert close(new0, avg, atol=1e-7)
    # rho = 0.5, lr_s = 1 on toy states: v1 = d1, w1 = w0 - d1; v2 = 0.5 d1 + d2, w2 = w1 - v2
    _, _, m = make("fedavgm", model=model, method_options={"server_momentum": 0.5})
    m.keys = ["w"]
    w0 = {"w": torch.tensor([1.0, -1.0])}
    c1 = [ClientResult(0, {"w": torch.tensor([0.0, 0.0])}, 1, 1), ClientResult(1, {"w": torch.tensor([2.0, 2.0])}, 3, 1)]
    w1 = m.aggregate(1, w0, c1)
    d1 = np.array([1.0, -1.0]) - np.array([1.5, 1.5])
    assert np.allclose(w1["w"].numpy(), np.array([1.0, -1.0]) - d1)
    c2 = [ClientResult(0, {"w": torch.tensor([0.0, 1.0])}, 1, 1), ClientResult(1, {"w": torch.tensor([1.0, 1.0])}, 1, 1)]
    w2 = m.aggregate(2, w1, c2)
    d2 = w1["w"].numpy() - np.array([0.5, 1.0])
    assert np.allclose(w2["w"].numpy(), w1["w"].numpy() - (0.5 * d1 + d2), atol=1e-6)


# -- options -------------------------------------------------------------------------


def test_method_options_defaults_and_errors():
    cfg = RunConfig(method="fedavgm")
    assert METHODS.get("fedavgm").resolve_options({}, cfg) == {"server_momentum": 0.5, "server_lr": 1.0}
    assert METHODS.get("fedprox").resolve_options({}, cfg) == {"mu": 1e-3}
    assert METHODS.get("moon").resolve_options({}, cfg) == {"mu": 1.0, "tau": 0.5, "out_dim": 256}
    assert METHODS.get("fedetf").resolve_options({}, RunConfig(rounds=30))["gmv_warmup"] == 15
    with pytest.raises(CollapseLabError, match="has no option server_momentum; its options: mu"):
        METHODS.get("fedprox").resolve_options({"server_momentum": 0.5}, RunConfig(method="fedprox"))
    with pytest.raises(CollapseLabError, match=r"\[0, 1\)"):
        METHODS.get("fedavgm").resolve_options({"server_momentum": 1.5}, cfg)
    with pytest.raises(CollapseLabError, match="not a number"):
        METHODS.get("moon").resolve_options({"tau": "warm"}, cfg)
    with pytest.raises(CollapseLabError, match="whole number"):
        METHODS.get("fedetf").resolve_options({"gmv_warmup": 2.5}, cfg)
