"""Spectra against an independent float64 SVD of the centred data; R, effective rank, counts."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from collapse_lab.spectra.functional import (covariance, effective_rank, local_global_gap, n_significant,
                                             spectrum, variance_share)


def collapsed_data(n=500, d=40, rank=12, seed=0):
    """Data whose covariance has `rank` resolved values spanning 6 decades and d - rank exact zeros."""
    g = torch.Generator().manual_seed(seed)
    basis, _ = torch.linalg.qr(torch.randn(d, rank, generator=g, dtype=torch.float64))
    scales = torch.logspace(0, -3, rank, dtype=torch.float64)
    return (torch.randn(n, rank, generator=g, dtype=torch.float64) * scales) @ basis.T + 5.0


def test_spectrum_equals_svd_of_centred_data():
    z = collapsed_data()
    sv, floor = spectrum(z)
    zc = z - z.mean(0)
    ref = np.linalg.svd(zc.numpy() / math.sqrt(len(z)), compute_uv=False) ** 2  # independent route: numpy SVD
    above = ref > floor
    assert above.sum() == 12
    assert np.allclose(sv.numpy()[above], ref[above], rtol=1e-8, atol=0)
    assert (sv[12:] <= floor).all()  # the collapsed tail sits at the numerical floor
    assert (sv[:-1] >= sv[1:]).all() and (sv >= 0).all()


def test_float32_input_is_promoted_before_centring():
    z = collapsed_data(rank=40)
    z32 = z.float()
    assert covariance(z32).dtype == torch.float64
    assert torch.allclose(covariance(z32), covariance(z32.double()), rtol=0, atol=0)


def test_counts_effective_rank_share():
    sv = torch.tensor([4.0, 2.0, 1.0, 0.5, 0.0], dtype=torch.float64)
    assert n_significant(sv, 0.9) == 3 and n_significant(sv, 1e-2) == 4
    assert effective_rank(torch.ones(7, dtype=torch.float64)) == pytest.approx(7.0)
    assert effective_rank(torch.tensor([3.0, 0, 0], dtype=torch.float64)) == pytest.approx(1.0)
    p = np.array([4, 2, 1, 0.5]) / 7.5
    assert effective_rank(sv) == pytest.approx(math.exp(-(p * np.log(p)).sum()))
    assert variance_share(sv, 2) == pytest.approx(6 / 7.5)


def test_gap_zero_for_identical_and_signed_for_constructed():
    z = collapsed_data(rank=40)
    sv, fl = spectrum(z)
    assert local_global_gap(sv, sv, fl, fl) == (0.0, 40)
    glob = torch.tensor([1.0, 0.1, 0.01], dtype=torch.float64)
    local = torch.tensor([10.0, 1.0, 0.1], dtype=torch.float64)  # one decade above everywhere
    r, k = local_global_gap(local, glob)
    assert k == 3 and r == pytest.approx(1.0)
    r2, _ = local_global_gap(glob, local)
    assert r2 == pytest.approx(-1.0)  # global above local: negative
    local = torch.tensor([2.0, 0.4, 0.01], dtype=torch.float64)
    expected = (math.log10(2) + math.log10(4) + 0) / 3
    assert local_global_gap(local, glob)[0] == pytest.approx(expected)


def test_gap_with_zeros_is_finite():
    local = torch.tensor([1.0, 0.5, 0.0, 0.0], dtype=torch.float64)
    glob = torch.tensor([1.0, 0.0, 0.0, 0.0], dtype=torch.float64)
    r, k = local_global_gap(local, glob, 1e-12, 1e-12)
    assert k == 1 and r == 0.0  # default K stops where either value reaches its floor
    r, k = local_global_gap(local, glob, 1e-12, 1e-12, top=4)
    assert k == 4 and math.isfinite(r)
    assert r == pytest.approx((0 + math.log10(0.5 / 1e-12) + 0 + 0) / 4)
    r, k = local_global_gap(torch.zeros(3, dtype=torch.float64), torch.zeros(3, dtype=torch.float64), top=3)
    assert r == 0.0 and k == 3
