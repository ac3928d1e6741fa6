"""DeCov, Structured-DeCov and FedUV against direct (loop / numpy float64) formulas."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from collapse_lab.errors import CollapseLabError
from collapse_lab.regularizers import build_regularizer, default_beta, resolve_options
from collapse_lab.regularizers.decov import decov_loss, group_ids, structured_decov_loss
from collapse_lab.regularizers.feduv import ideal_std, uniformity_loss, variance_loss


def _z(n=12, d=6, seed=0):
    return torch.randn(n, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_decov_matches_numpy_covariance():
    z = _z()
    c = np.cov(z.numpy(), rowvar=False, bias=True)  # 1/N normalisation
    ref = 0.5 * (np.sum(c**2) - np.sum(np.diag(c) ** 2))
    assert decov_loss(z).item() == pytest.approx(ref, rel=1e-12)
    # zero for independent coordinates with an exactly diagonal covariance
    zd = torch.tensor([[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0]], dtype=torch.float64)
    assert decov_loss(zd).item() == 0.0


def test_structured_decov_is_the_cross_group_sum():
    z = _z(d=7)
    c = np.cov(z.numpy(), rowvar=False, bias=True)
    g = [i * 3 // 7 for i in range(7)]
    ref = 0.5 * sum(c[i, j] ** 2 for i in range(7) for j in range(7) if g[i] != g[j])
    assert structured_decov_loss(z, 3).item() == pytest.approx(ref, rel=1e-12)
    assert group_ids(7, 3).tolist() == g
    # one group per unit = DeCov
    assert structured_decov_loss(z, 7).item() == pytest.approx(decov_loss(z).item(), rel=1e-12)


def test_feduv_uniformity_term_direct():
    z = _z(n=9, d=4)
    zn = z.numpy()
    d2 = [float(np.sum((zn[i] - zn[j]) ** 2)) for i in range(9) for j in range(i + 1, 9)]
    nz = sorted(v for v in d2 if v != 0)
    sigma = nz[(len(nz) - 1) // 2]  # torch.median, as in the pseudocode: the lower middle value
    ref = float(np.mean([math.exp(-v / sigma) for v in d2]))
    assert uniformity_loss(z).item() == pytest.approx(ref, rel=1e-12)
    assert uniformity_loss(torch.ones(5, 3)).item() == 0.0  # no nonzero distance
    assert uniformity_loss(torch.ones(1, 3)).item() == 0.0


def test_feduv_variance_term_direct():
    logits = _z(n=10, d=5, seed=3)
    p = np.exp(logits.numpy()) / np.exp(logits.numpy()).sum(1, keepdims=True)
    c_star = 1 / math.sqrt(5)  # std (unbiased) of a one-hot column: 1/sqrt(C)
    assert ideal_std(5) == pytest.approx(c_star, rel=1e-12)
    ref = float(np.mean(np.maximum(0.0, c_star - p.std(axis=0, ddof=1))))
    assert variance_loss(logits).item() == pytest.approx(ref, rel=1e-6)
    # it has a gradient (the pseudocode's one-hot version has none)
    lg = logits.clone().requires_grad_(True)
    variance_loss(lg).backward()
    assert lg.grad.abs().sum() > 0


def test_feduv_combines_with_paper_defaults():
    z, logits = _z(n=8, d=4), _z(n=8, d=10, seed=5)
    opts = resolve_options("feduv", {}, num_classes=10)
    assert opts == {"mu": 1.0, "lam": 2.0}  # lam = C/5
    reg = build_regularizer("feduv", num_classes=10, **opts)
    ref = uniformity_loss(z.float()).item() + 2.0 * variance_loss(logits).item()
    assert reg(z, logits).item() == pytest.approx(ref, rel=1e-5)
    assert default_beta("feduv") == 1.0 and default_beta("feddecorr") == 0.1


def test_regularizer_option_errors():
    with pytest.raises(CollapseLabError, match="has no option sigma; its options: hinge, lam, mu"):
        resolve_options("feduv", {"sigma": 1})
    with pytest.raises(CollapseLabError, match="whole number >= 2"):
        resolve_options("structured-decov", {"groups": 1}, num_classes=10)
    with pytest.raises(CollapseLabError, match="has no option groups; its options: none"):
        resolve_options("decov", {"groups": 2})


def test_feduv_variance_term_variants_match_numpy():
    """FedUV Table 6's variants: hinge (default), squared hinge, no hinge, each against a
    numpy computation of mean_c f(c* - std_c(softmax)) with the unbiased std; and the
    option's default stays out of the resolved options (earlier runs keep their names)."""
    from collapse_lab.errors import CollapseLabError
    from collapse_lab.regularizers import build_regularizer, resolve_options
    from collapse_lab.regularizers.feduv import variance_loss

    rng = np.random.default_rng(3)
    logits = rng.normal(size=(12, 5)) * 3
    logits[:6, 0] += 20  # half the batch sure of class 0: that column's std exceeds c* (a negative gap)
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    gap = np.eye(5).std(axis=0, ddof=1).mean() - p.std(axis=0, ddof=1)
    want = {1: np.maximum(gap, 0).mean(), 2: (np.maximum(gap, 0) ** 2).mean(), 0: gap.mean()}
    t = torch.tensor(logits, dtype=torch.float32)
    for h, w in want.items():
        assert float(variance_loss(t, h)) == pytest.approx(w, rel=1e-5, abs=1e-7), h
    assert want[0] != pytest.approx(want[1])  # the data exercise the hinge: some gaps are negative
    z = torch.zeros(12, 4)
    r2 = build_regularizer("feduv", num_classes=5, mu=0.0, lam=1.0, hinge=2)(z, t)
    assert float(r2) == pytest.approx(want[2], rel=1e-5)
    assert "hinge" not in resolve_options("feduv", {}, 5) and resolve_options("feduv", {"hinge": 0}, 5)["hinge"] == 0
    with pytest.raises(CollapseLabError, match="hinge=3"):
        resolve_options("feduv", {"hinge": 3}, 5)
