"""FedDecorr (Eq. 8) against numpy's float64 correlation matrix, and its invariances."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from collapse_lab.regularizers import build_regularizer
from collapse_lab.regularizers.feddecorr import (correlation_matrix, feddecorr_loss, feddecorr_loss_official,
                                                 official_from_paper)


def sample(n=48, d=12, seed=0):
    g = torch.Generator().manual_seed(seed)
    mix = torch.randn(d, d, generator=g, dtype=torch.float64)
    return torch.randn(n, d, generator=g, dtype=torch.float64) @ mix + 3.0


def test_equals_numpy_corrcoef_float64():
    z = sample()
    k_ref = np.corrcoef(z.numpy(), rowvar=False)  # independent route: numpy, float64
    d = z.shape[1]
    expected = (k_ref**2).sum() / d**2
    assert feddecorr_loss(z).item() == pytest.approx(expected, rel=1e-12)
    assert np.allclose(correlation_matrix(z).numpy(), k_ref, rtol=0, atol=1e-12)


def test_float32_close_to_float64():
    z = sample()
    assert feddecorr_loss(z.float()).item() == pytest.approx(feddecorr_loss(z).item(), rel=1e-5)


def test_invariant_to_per_dimension_affine_rescaling():
    z = sample()
    g = torch.Generator().manual_seed(5)
    scale = torch.rand(z.shape[1], generator=g, dtype=torch.float64) * 10 + 0.1
    scale[::3] *= -1  # sign flips change the sign of correlations, not their squares
    shift = torch.randn(z.shape[1], generator=g, dtype=torch.float64) * 100
    assert feddecorr_loss(z * scale + shift).item() == pytest.approx(feddecorr_loss(z).item(), rel=1e-10)


def test_bounds_identity_and_rank_one():
    d = 8
    # exactly decorrelated columns (orthogonal, centred): K = I, L = 1/d
    q, _ = torch.linalg.qr(torch.randn(64, d, dtype=torch.float64))
    h = torch.eye(64, dtype=torch.float64) - 1.0 / 64
    z = h @ q
    q2, _ = torch.linalg.qr(z)
    assert feddecorr_loss(q2).item() == pytest.approx(1.0 / d, rel=1e-10)
    # fully collapsed (rank one, all dims the same up to affine maps): L = 1
    v = torch.randn(64, 1, dtype=torch.float64)
    assert feddecorr_loss(v * torch.arange(1.0, d + 1, dtype=torch.float64)).item() == pytest.approx(1.0, rel=1e-10)


def test_official_scaling_factor():
    z = sample(n=32, d=10)
    n, d = z.shape
    paper = feddecorr_loss(z).item()
    # eps = 0 makes the relation exact
    assert feddecorr_loss_official(z, eps=0.0).item() == pytest.approx(official_from_paper(paper, n, d), rel=1e-10)
    # the direct formula: off-diagonal mean of ((N - 1) K)^2, divided by N
    k = np.corrcoef(z.numpy(), rowvar=False)
    off = (k**2).sum() - d
    assert feddecorr_loss_official(z, eps=0.0).item() == pytest.approx((n - 1) ** 2 * off / (d * (d - 1)) / n, rel=1e-10)


def test_zero_variance_dimension_no_nan():
    z = sample(n=16, d=6).float()
    z[:, 2] = 0.0  # a dead ReLU unit
    z[:, 4] = 1.5  # a constant dimension
    z.requires_grad_(True)
    loss = feddecorr_loss(z)
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(z.grad).all()
    assert z.grad[:, 2].abs().max() == 0 and z.grad[:, 4].abs().max() == 0
    # the constant dimensions behave like uncorrelated ones: same value as the live block + identity
    live = z.detach()[:, [0, 1, 3, 5]].double()
    k_live = np.corrcoef(live.numpy(), rowvar=False)
    expected = ((k_live**2).sum() + 2) / 36
    assert loss.item() == pytest.approx(expected, rel=1e-5)


def test_batch_of_one():
    z = torch.randn(1, 5, requires_grad=True)
    loss = feddecorr_loss(z)
    loss.backward()
    assert loss.item() == pytest.approx(1 / 5) and torch.isfinite(z.grad).all()
    assert feddecorr_loss_official(torch.randn(1, 5)).item() == 0.0


def test_gradient_decorrelates():
    """A gradient step on L lowers it (the term does what Eq. 9 intends)."""
    z = sample(n=64, d=8).requires_grad_(True)
    loss = feddecorr_loss(z)
    loss.backward()
    with torch.no_grad():
        assert feddecorr_loss(z - 1.0 * z.grad).item() < loss.item()


def test_registry_builds_both_normalisations():
    z = sample()
    assert build_regularizer("feddecorr")(z).item() == pytest.approx(feddecorr_loss(z).item())
    assert build_regularizer("feddecorr", normalization="official")(z).item() == pytest.approx(
        feddecorr_loss_official(z).item())
    assert build_regularizer("none") is None


def test_the_paper_preset_uses_the_scaling_that_produced_the_printed_numbers():
    """The papers' beta = 0.1 results came from the released code's scaling: the paper
    preset resolves FedDecorr to it; the quick preset keeps Eq. 8; a given --decorr-norm wins;
    runs without FedDecorr keep their names."""
    from collapse_lab.runspec.resolve import resolve_runs

    def one(**flags):
        (cfg,) = resolve_runs({"alpha": ["0.5"], **flags})
        return cfg

    def norm(cfg):
        return cfg.reg_options["normalization"]

    assert norm(one(reg="feddecorr")) == "official"
    assert norm(one(reg="feddecorr", preset="quick")) == "paper"
    assert norm(one(reg="feddecorr", decorr_norm="paper")) == "paper"
    assert norm(one(reg="feddecorr", reg_option=["normalization=paper"])) == "paper"
    assert one().reg_options == {} and one().run_name() == one(preset="paper").run_name()


# Names the resolver gave when the scaling was the RunConfig field decorr_norm (commit
# fb8a6c9): the option now declared in feddecorr.py must leave every one as it was.
NAMES_BEFORE = [({"reg": "feddecorr"}, "digits_mlp_fedavg_feddecorr0.1_dir0.5_K10_s0_992f88ba"),
                ({"reg": "feddecorr", "preset": "quick"}, "digits_mlp_fedavg_feddecorr0.1_dir0.5_K10_s0_5d108d75"),
                ({"reg": "feddecorr", "decorr_norm": "paper"}, "digits_mlp_fedavg_feddecorr0.1_dir0.5_K10_s0_3df8f29e"),
                ({"reg": "feddecorr", "preset": "quick", "decorr_norm": "official"},
                 "digits_mlp_fedavg_feddecorr0.1_dir0.5_K10_s0_ff3c411c"),
                ({}, "digits_mlp_fedavg_none_dir0.5_K10_s0_ebe5bf0e"),
                ({"reg": "feduv"}, "digits_mlp_fedavg_feduv1_dir0.5_K10_s0_95cb6dbd"),
                ({"reg": "decov", "preset": "quick"}, "digits_mlp_fedavg_decov0.1_dir0.5_K10_s0_e216df23")]


@pytest.mark.precision("fp32")  # compares with fp32 numbers, run names or round-off
@pytest.mark.parametrize("flags,name", NAMES_BEFORE)
def test_the_scaling_as_feddecorrs_own_option_keeps_every_run_name(flags, name):
    from collapse_lab.config import RunConfig
    from collapse_lab.runspec.resolve import resolve_runs

    (cfg,) = resolve_runs({"alpha": ["0.5"], **flags})
    assert cfg.run_name() == name
    # a run.json written then (format 1.1: the scaling a field of its own) reads as the option
    old = {k: v for k, v in cfg.to_json().items()}
    opts = dict(old["reg_options"])
    old["decorr_norm"] = opts.pop("normalization", "paper")
    old["reg_options"] = opts
    back = RunConfig.from_json(old)
    assert back.run_name() == name and back.identity() == cfg.identity()
    assert back.reg_options.get("normalization") == cfg.reg_options.get("normalization")


def test_the_scaling_option_refuses_other_values_and_other_regularizers():
    from collapse_lab.errors import CollapseLabError
    from collapse_lab.runspec.resolve import resolve_runs

    with pytest.raises(CollapseLabError, match="option normalization='nope': use paper or official"):
        resolve_runs({"alpha": ["0.5"], "reg": "feddecorr", "reg_option": ["normalization=nope"]})
    with pytest.raises(CollapseLabError, match="regularizer none has no option normalization"):
        resolve_runs({"alpha": ["0.5"], "reg_option": ["normalization=paper"]})


def test_the_scaling_varies_only_among_feddecorr_runs():
    """FedAvg against FedDecorr in the released scaling differ in the regularizer only: a claim
    pairing them (ICLR Fig. 3) must find the pair (it found none at the cpu and paper presets
    while the scaling of the FedAvg run read as 'paper')."""
    from collapse_lab.analysis.select import varying
    from collapse_lab.runspec.resolve import resolve_runs

    (plain,) = resolve_runs({"alpha": ["0.5"]})
    (official,) = resolve_runs({"alpha": ["0.5"], "reg": "feddecorr"})
    (eq8,) = resolve_runs({"alpha": ["0.5"], "reg": "feddecorr", "decorr_norm": "paper"})
    assert plain.identity()["decorr_norm"] == "paper" and official.identity()["decorr_norm"] == "official"
    assert varying([plain, official]) == ["reg"]
    assert varying([official, eq8]) == ["decorr_norm"]
    assert varying([plain, official, eq8]) == ["reg", "decorr_norm"]
