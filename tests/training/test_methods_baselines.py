"""The baselines' defining math against independent computations: FedDyn, FedOpt
(FedAdam/FedYogi/FedAdagrad, FedAvgM as its momentum case), FedRS, FedProto, FedAwS,
FedMMD, and FedETF's parts as add-ons to other methods."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from collapse_lab.config import RunConfig
from collapse_lab.errors import CollapseLabError
from collapse_lab.methods.aggregate import server_opt_step, weighted_average
from collapse_lab.methods import METHODS, ClientResult
from collapse_lab.linalg import simplex_etf
from collapse_lab.methods.addons import WithGMV
from collapse_lab.methods.fedaws import spreadout_loss
from collapse_lab.methods.fedmmd import mmd_rbf
from collapse_lab.methods.fedproto import prototype_loss
from collapse_lab.training.trainer import train_client
from collapse_lab.seeds import PURPOSE_ETF, seed_for
from tests.training.methods_common import close, data, make, run_round


def _perturb(model, scale=0.1, seed=3):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            if p.requires_grad:
                p.add_(scale * torch.randn(p.shape, generator=g))


# -- FedDyn --------------------------------------------------------------------------


def test_feddyn_local_gradient_is_ce_gradient_minus_state_plus_alpha_displacement():
    cfg, model, method = make("feddyn", method_options={"alpha": 0.3})
    g0 = {k: v.clone() for k, v in model.state_dict().items()}
    gen = torch.Generator().manual_seed(5)
    method.grads[0] = {n: torch.randn(p.shape, generator=gen) for n, p in model.named_parameters()}
    hooks = method.client_start(0, 1, model, g0)
    _perturb(model)
    x, y = data()
    logits, z = model(x)
    params = list(model.parameters())
    g_ce = torch.autograd.grad(F.cross_entropy(logits, y), params, retain_graph=True)
    g_tot = torch.autograd.grad(F.cross_entropy(logits, y) + hooks.loss(model, x, y, logits, z), params)
    for (name, p), gc, gt in zip(model.named_parameters(), g_ce, g_tot):
        want = gc - method.grads[0][name] + 0.3 * (p.detach() - g0[name])
        assert torch.allclose(gt, want, atol=1e-6), name


def test_feddyn_state_and_server_update_by_hand_over_two_rounds():
    alpha, m = 0.2, 3  # three clients, two take part
    cfg, model, method = make("feddyn", clients=m, method_options={"alpha": alpha})
    keys = [n for n, _ in model.named_parameters()]
    w = {k: v.double().numpy().copy() for k, v in model.state_dict().items()}
    h = {k: np.zeros_like(w[k]) for k in keys}
    gk = {}
    state = {k: v.clone() for k, v in model.state_dict().items()}
    for r, parts in ((1, [0, 2]), (2, [2, 1])):
        results = []
        for k in parts:
            x, y = data(8 + 8 * k, 10 * r + k)  # unequal sizes: Alg. 1 averages uniformly all the same
            hooks = method.client_start(k, r, model, state)
            hist = train_client(model, x, y, lambda t: t, epochs=1, batch_size=8, lr=0.1, momentum=0.0,
                                weight_decay=0.0, reg=None, beta=0.0, generator=torch.Generator().manual_seed(k),
                                hooks=hooks)
            res = ClientResult(k, {n: v.detach().clone() for n, v in model.state_dict().items()}, len(y),
                               sum(e["steps"] for e in hist))
            method.client_end(k, r, hooks, res)
            results.append(res)
            wk = {n: res.state[n].double().numpy() for n in keys}
            gk[k] = {n: gk.get(k, {}).get(n, 0.0) - alpha * (wk[n] - w[n]) for n in keys}
        state = method.aggregate(r, state, results)
        for n in keys:
            ws = [c.state[n].double().numpy() for c in results]
            h[n] = h[n] - alpha / m * sum(v - w[n] for v in ws)
            w[n] = np.mean(ws, axis=0) - h[n] / alpha
            np.testing.assert_allclose(state[n].double().numpy(), w[n], atol=1e-6)
            np.testing.assert_allclose(method.h[n].numpy(), h[n], atol=1e-12)
            w[n] = state[n].double().numpy()  # the stored (float32) global model is next round's anchor
        for k in gk:
            for n in keys:
                np.testing.assert_allclose(method.grads[k][n].double().numpy(), gk[k][n], atol=1e-6)
    # the state round-trips through server_state/client_state
    _, _, other = make("feddyn", model=model, clients=m, method_options={"alpha": alpha})
    other.load_state(method.server_state(), method.client_state())
    assert close(other.h, method.h, atol=0) and all(close(other.grads[k], method.grads[k], atol=0) for k in gk)


# -- FedOpt --------------------------------------------------------------------------


def _states(seed, shape=(3, 4), dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return {"w": torch.randn(shape, generator=g, dtype=dtype)}, {"w": torch.randn(shape, generator=g, dtype=dtype)}


@pytest.mark.parametrize("kind", ["adam", "yogi", "adagrad"])
def test_fedopt_two_server_steps_against_numpy(kind):
    lr, b1, b2, tau = 0.05, 0.8, 0.95, 1e-2
    x, moments = _states(0)[0], None
    xn = x["w"].double().numpy()
    m = np.zeros_like(xn)
    v = np.full_like(xn, tau * tau)
    for step in range(2):
        avg = _states(step + 1)[1]
        x, moments = server_opt_step(x, avg, moments, ["w"], kind, lr, b1, b2, tau)
        g = xn - avg["w"].double().numpy()
        m = b1 * m + (1 - b1) * g
        v = {"adam": lambda: b2 * v + (1 - b2) * g * g, "adagrad": lambda: v + g * g,
             "yogi": lambda: v - (1 - b2) * g * g * np.sign(v - g * g)}[kind]()
        xn = xn - lr * m / (np.sqrt(v) + tau)
        np.testing.assert_allclose(x["w"].double().numpy(), xn, rtol=1e-6, atol=1e-7)


def test_fedadam_without_momentum_and_large_tau_is_scaled_fedavg():
    x, avg = _states(7, dtype=torch.float64)  # float64: a step of 5e-7 is below float32's resolution
    lr, b2, tau = 1.0, 0.99, 1e6
    new, _ = server_opt_step(x, avg, None, ["w"], "adam", lr, beta1=0.0, beta2=b2, tau=tau)
    # v = b2 tau^2 + (1 - b2) g^2 -> sqrt(v) ~ tau sqrt(b2): a step of lr / (tau (1 + sqrt(b2))) towards the average
    step = (new["w"].double() - x["w"].double()) / (avg["w"].double() - x["w"].double())
    assert torch.allclose(step, torch.full_like(step, lr / (tau * (1 + np.sqrt(b2)))), rtol=1e-6)
    # with the server lr scaled up by that factor it is FedAvg itself
    new, _ = server_opt_step(x, avg, None, ["w"], "adam", tau * (1 + np.sqrt(b2)), beta1=0.0, beta2=b2, tau=tau)
    assert torch.allclose(new["w"], avg["w"], atol=1e-5)


def test_fedavgm_is_fedopt_with_heavy_ball_momentum_by_hand():
    x, moments = _states(0)[0], None
    xn, vel = x["w"].double().numpy(), None
    for step in range(3):
        avg = _states(step + 1)[1]
        x, moments = server_opt_step(x, avg, moments, ["w"], "sgdm", 0.7, beta1=0.5)
        d = xn - avg["w"].double().numpy()
        vel = d if vel is None else 0.5 * vel + d  # Hsu et al. 2019, Alg. 1
        xn = xn - 0.7 * vel
        np.testing.assert_allclose(x["w"].double().numpy(), xn, rtol=1e-6)


def test_fedopt_methods_train_a_round_and_keep_moments_of_the_parameters():
    for name in ("fedadam", "fedyogi", "fedadagrad", "fedopt"):
        cfg, model, method = make(name)
        g0 = {k: v.clone() for k, v in model.state_dict().items()}
        g1, results = run_round(method, cfg, model, g0, 1, [data(16, 1), data(16, 2)])
        ref, _ = server_opt_step(g0, weighted_average([r.state for r in results], [16, 16]), None,
                                 [n for n, _ in model.named_parameters()], method.kind, **{
                                     "lr": cfg.method_options["server_lr"], "beta1": 0.9, "beta2": 0.99,
                                     "tau": 1e-3})
        assert close(g1, ref, atol=0)
        assert sorted(method.server_state()) == sorted(f"{w}/{n}" for w in "mv" for n, _ in model.named_parameters())


# -- FedRS ---------------------------------------------------------------------------


def _counts(*rows):
    return torch.tensor(rows, dtype=torch.float64)


def test_fedrs_alpha_one_is_fedavgs_local_loss_and_alpha_scales_missing_classes():
    x, y = data()
    cfg, model, method = make("fedrs", method_options={"alpha": 1.0})
    method.bind_clients(_counts([5, 0, 3], [0, 4, 4]))
    hooks = method.client_start(0, 1, model, model.state_dict())
    logits, z = model(x)
    assert torch.equal(hooks.logits(model, z, y, logits), logits)
    cfg, model, method = make("fedrs", method_options={"alpha": 0.3})
    method.bind_clients(_counts([5, 0, 3], [0, 4, 4]))
    hooks = method.client_start(0, 1, model, model.state_dict())
    logits, z = model(x)
    got = F.cross_entropy(hooks.logits(model, z, y, logits), y).item()
    W, b = model.classifier.weight.detach().double().numpy(), model.classifier.bias.detach().double().numpy()
    o = (z.detach().double().numpy() @ W.T) * np.array([1.0, 0.3, 1.0]) + b  # class 1 absent on client 0
    ref = np.mean(np.log(np.exp(o).sum(1)) - o[np.arange(len(y)), y.numpy()])
    assert got == pytest.approx(ref, rel=1e-5)


def test_fedrs_proportional_scale_is_the_released_codes():
    from collapse_lab.methods.fedrs import restricted_scale
    c = _counts([8, 0, 2])[0]
    assert restricted_scale(c, 0.5, True).tolist() == [1.0, 0.5, 0.625]  # 0.5 + 0.5 * n / 8
    assert restricted_scale(c, 0.5, False).tolist() == [1.0, 0.5, 1.0]


# -- FedProto ------------------------------------------------------------------------


def test_fedproto_loss_by_hand():
    z = torch.tensor([[1.0, 2.0], [0.0, 1.0], [3.0, 3.0]])
    y = torch.tensor([0, 1, 2])
    protos = torch.tensor([[0.0, 0.0], [1.0, 1.0], [9.0, 9.0]], dtype=torch.float64)
    known = torch.tensor([True, True, False])
    # (1 + 4 + 1 + 0) / 4: class 2 has no prototype and stays out
    assert prototype_loss(z, y, protos, known).item() == pytest.approx(1.5)
    assert prototype_loss(z, y, protos, torch.zeros(3, dtype=torch.bool)).item() == 0.0


def test_fedproto_global_prototypes_are_count_weighted_class_means():
    cfg, model, method = make("fedproto", method_options={"lam": 2.0})
    g0 = model.state_dict()
    zs = {0: (torch.tensor([[1.0, 0.0], [3.0, 0.0], [0.0, 5.0]]), torch.tensor([0, 0, 1])),
          1: (torch.tensor([[7.0, 1.0]]), torch.tensor([0]))}
    results = []
    for k, (z, y) in zs.items():
        hooks = method.client_start(k, 1, model, g0)
        pad = torch.zeros(len(y), model.feature_dim - 2)
        hooks.on_batch(cfg.local_epochs - 1, torch.cat([z, pad], 1), y)
        res = ClientResult(k, {n: v.clone() for n, v in g0.items()}, len(y), 1)
        method.client_end(k, 1, hooks, res)
        results.append(res)
    method.aggregate(1, g0, results)
    assert method.protos[0, :2].tolist() == [11 / 3, 1 / 3]  # (1 + 3 + 7) / 3, (0 + 0 + 1) / 3
    assert method.protos[1, :2].tolist() == [0.0, 5.0]
    assert method.known.tolist() == [True, True, False]
    hooks = method.client_start(0, 2, model, g0)
    x, y = data()
    logits, z = model(x)
    assert hooks.loss(model, x, y, logits, z).item() == pytest.approx(
        2.0 * prototype_loss(z, y, method.protos, method.known).item())


# -- FedAwS --------------------------------------------------------------------------


def test_fedaws_spreadout_loss_against_numpy_and_the_server_step():
    w = torch.tensor([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0]], dtype=torch.float64)
    wn = w.numpy() / np.linalg.norm(w.numpy(), axis=1, keepdims=True)
    d = 0.5 * (1 - wn @ wn.T)
    np.fill_diagonal(d, 0.0)
    ref = np.mean(np.maximum(0.8 - d, 0) ** 2)
    assert spreadout_loss(w, 0.8).item() == pytest.approx(ref, rel=1e-12)
    cfg, model, method = make("fedaws")
    g0 = {k: v.clone() for k, v in model.state_dict().items()}
    g1, results = run_round(method, cfg, model, g0, 1, [data(16, 1), data(16, 2)])
    avg = weighted_average([r.state for r in results], [16, 16])
    assert close({k: v for k, v in g1.items() if k != "classifier.weight"},
                 {k: v for k, v in avg.items() if k != "classifier.weight"}, atol=0)
    assert spreadout_loss(g1["classifier.weight"], 0.8) < spreadout_loss(avg["classifier.weight"], 0.8)


# -- FedMMD --------------------------------------------------------------------------


def _mmd_numpy(x, y, mul=2.0, num=5):
    t = np.concatenate([x, y])
    d2 = ((t[:, None] - t[None]) ** 2).sum(-1)
    n2 = len(t)
    s = (d2.sum() / (n2 * n2 - n2) + 1e-8) / mul ** (num // 2)
    k = sum(np.exp(-d2 / (s * mul**i)) for i in range(num))
    n = len(x)
    return (k[:n, :n] + k[n:, n:] - k[:n, n:] - k[n:, :n]).mean()


def test_fedmmd_kernel_mmd_against_numpy_and_zero_for_equal_batches():
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(6, 4, generator=g, dtype=torch.float64), torch.randn(6, 4, generator=g, dtype=torch.float64)
    assert mmd_rbf(x, y).item() == pytest.approx(_mmd_numpy(x.numpy(), y.numpy()), rel=1e-12)
    assert mmd_rbf(x, x).item() == pytest.approx(0.0, abs=1e-12)
    cfg, model, method = make("fedmmd", method_options={"lam": 0.5})
    g0 = {k: v.clone() for k, v in model.state_dict().items()}
    hooks = method.client_start(0, 1, model, g0)
    xb, yb = data()
    assert hooks.loss(model, xb, yb, *model(xb)).item() == pytest.approx(0.0, abs=1e-6)  # local = global
    _perturb(model, 0.5)
    logits, z = model(xb)
    zg = method.glob(xb)[1]
    want = 0.5 * _mmd_numpy(z.detach().double().numpy(), zg.detach().double().numpy())
    assert hooks.loss(model, xb, yb, logits, z).item() == pytest.approx(want, rel=1e-4)


# -- FedETF's parts on other methods -------------------------------------------------


def test_etf_on_scaffold_fixes_the_classifier_and_its_control_variates_skip_it():
    cfg, model, method = make("scaffold", method_options={"etf_scale": 1.0}, seed=4)
    w = simplex_etf(model.feature_dim, 3, torch.Generator().manual_seed(seed_for(4, PURPOSE_ETF)))
    assert torch.allclose(model.classifier.weight.double(), w.T, atol=1e-7)
    assert not model.classifier.weight.requires_grad and "classifier.weight" not in method.keys
    g0 = {k: v.clone() for k, v in model.state_dict().items()}
    g1, _ = run_round(method, cfg, model, g0, 1, [data(16, 1), data(16, 2)])
    assert torch.equal(g1["classifier.weight"], g0["classifier.weight"])
    assert not isinstance(method, WithGMV) and cfg.method_options == {"server_lr": 1.0, "etf_scale": 1.0}


def test_memory_vectors_without_etf_on_fedprox_compose_with_its_hooks():
    cfg, model, method = make("fedprox", method_options={"gmv_weight": 1.0, "gmv_warmup": 2})
    assert isinstance(method, WithGMV) and model.classifier.weight.requires_grad
    g0 = {k: v.clone() for k, v in model.state_dict().items()}
    g1, _ = run_round(method, cfg, model, g0, 1, [data(16, 1), data(16, 2)])
    assert method.seen.all() and sorted(method.server_state()) == ["gmv", "gmv_seen"]
    hooks = method.client_start(0, 2, model, g1)
    _perturb(model)
    x, y = data()
    logits, z = model(x)
    # the logits are the classifier on z + mu_y; FedProx's term is still there
    assert torch.allclose(hooks.logits(model, z, y, logits), model.classifier(z + method.mu[y].float()), atol=1e-6)
    assert hooks.loss(model, x, y, logits, z).item() > 0


def test_addon_options_are_checked_and_left_out_when_not_given():
    cfg = RunConfig(method="fedavg", rounds=10)
    assert METHODS.get("fedavg").resolve_options({}, cfg) == {}
    assert METHODS.get("fedavg").resolve_options({"gmv_weight": 0.5}, cfg) == {"gmv_weight": 0.5, "gmv_warmup": 5}
    assert METHODS.get("fedetf").resolve_options({}, RunConfig(method="fedetf", rounds=10)) == {
        "etf_scale": 1.0, "gmv_weight": 0.5, "gmv_warmup": 5}
    for bad, msg in (({"etf_scale": 0}, "etf_scale must be > 0"), ({"gmv_warmup": 3}, "gmv_warmup needs gmv_weight"),
                     ({"gmv_weight": -1}, "gmv_weight must be >= 0"), ({"alpha": 1}, "has no option alpha")):
        with pytest.raises(CollapseLabError, match=msg):
            METHODS.get("fedavg").resolve_options(bad, cfg)
    with pytest.raises(CollapseLabError, match="fedaws moves the classifier"):
        METHODS.get("fedaws").resolve_options({"etf_scale": 1}, RunConfig(method="fedaws", method_options={
            "etf_scale": 1}))


def test_evaluation_per_domain_by_hand():
    from collapse_lab.methods.evaluate import evaluate

    cfg, model, _ = make("fedavg")
    x, y = data(12, 9)
    dom = torch.tensor([0, 1, 1, 2] * 3)
    dom[dom == 1] = 3  # domain 1 has no test sample
    ev = evaluate(model, x, y, lambda t: t, 5, dom)
    pred = model(x)[0].argmax(1)
    want = [(pred[dom == d] == y[dom == d]).double().mean().item() if (dom == d).any() else None for d in range(4)]
    assert ev["domain_test_acc"] == pytest.approx(want) and ev["domain_test_acc"][1] is None
    assert ev["test_acc"] == pytest.approx((pred == y).double().mean().item())
    assert "domain_test_acc" not in evaluate(model, x, y, lambda t: t, 5)
