"""Rank measures, dead units, CKA and neural-collapse metrics against independent float64
computations, closed forms and hand examples."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from collapse_lab.spectra.cka import cka_matrix, hsic_unbiased, linear_cka
from collapse_lab.spectra.functional import spectrum
from collapse_lab.spectra.neural_collapse import neural_collapse
from collapse_lab.spectra.rank import alpha_plain, alpha_req, dead_units, live_units, rankme, stable_rank


def _z(n=200, d=12, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=g, dtype=torch.float64) @ torch.randn(d, d, generator=g, dtype=torch.float64)


# -- dead units and rank measures ----------------------------------------------------


def test_dead_and_constant_units_are_found_and_dropped():
    z = _z()
    z[:, 3] = 0.0  # a dead ReLU unit
    z[:, 7] = 2.5  # a constant unit: its sample variance is round-off at most
    assert dead_units(z).tolist() == [3, 7]
    assert live_units(z).shape == (200, 10) and torch.equal(live_units(z)[:, 3], z[:, 4])
    assert dead_units(_z()).tolist() == []


def test_rankme_is_the_entropy_of_the_normalised_singular_values_of_z():
    z = _z(50, 6)
    s = np.linalg.svd(z.numpy(), compute_uv=False)
    p = s / s.sum() + 1e-7
    assert rankme(z) == pytest.approx(math.exp(-(p * np.log(p)).sum()), rel=1e-12)
    # a flat spectrum of rank r gives r (up to eps), rank one gives 1
    q, _ = torch.linalg.qr(torch.randn(50, 4, dtype=torch.float64))
    assert rankme(3.0 * q) == pytest.approx(4.0, rel=1e-5)
    assert rankme(torch.outer(torch.arange(1.0, 51.0), torch.ones(6)).double()) == pytest.approx(1.0, rel=1e-5)


def test_alpha_req_of_an_exact_power_law_is_its_exponent():
    k = torch.arange(1, 101, dtype=torch.float64)
    for alpha in (0.5, 1.0, 2.3):
        assert alpha_req(3.0 * k ** -alpha) == pytest.approx(alpha, rel=1e-12)
    # values at or below the floor end the fit: the leading power law is still found
    sv = torch.cat([k[:40] ** -1.5, torch.zeros(10)])
    assert alpha_req(sv, floor=1e-30) == pytest.approx(1.5, rel=1e-12)
    assert alpha_plain(k ** -1.0, top=10) == pytest.approx(1.0)
    assert math.isnan(alpha_req(torch.tensor([1.0], dtype=torch.float64)))
    assert math.isnan(alpha_req(k[:11] ** -1.0))  # one value in the authors' range 11..100


def test_alpha_req_is_the_authors_weighted_fit_over_ranks_11_to_100():
    """Written out: minimise sum_k (1/k) (log lambda_k - c + alpha log k)^2 over k = 11..100,
    i.e. b = (X^T W X)^-1 X^T W y with X = [-log k, 1], W = diag(1/k), alpha = b[0]."""
    rng = np.random.default_rng(3)
    k = np.arange(1, 301, dtype=np.float64)
    sv = 2.0 * k ** -1.3 * np.exp(0.3 * rng.standard_normal(300))
    sv = np.sort(sv)[::-1]
    kk = k[10:100]
    x = np.stack([-np.log(kk), np.ones_like(kk)], 1)
    w = np.diag(1.0 / kk)
    b = np.linalg.solve(x.T @ w @ x, x.T @ w @ np.log(sv[10:100]))
    assert alpha_req(torch.from_numpy(sv.copy())) == pytest.approx(b[0], rel=1e-10)
    # the plain fit is another number on such a spectrum (the issue measured 1.678 vs 1.194 on real features)
    assert abs(alpha_plain(torch.from_numpy(sv.copy()), top=100) - b[0]) > 1e-3


def test_stable_rank_is_frobenius_over_spectral_norm_squared():
    z = _z(80, 7)
    zc = z.numpy() - z.numpy().mean(0)
    ref = np.linalg.norm(zc, "fro") ** 2 / np.linalg.norm(zc, 2) ** 2
    sv, _ = spectrum(z)
    assert stable_rank(sv) == pytest.approx(ref, rel=1e-10)


# -- CKA -----------------------------------------------------------------------------


def _hsic_numpy(x, y):
    """Song et al. 2012's unbiased HSIC with the n x n Gram matrices, literally."""
    n = len(x)
    k, l = x @ x.T, y @ y.T
    np.fill_diagonal(k, 0)
    np.fill_diagonal(l, 0)
    one = np.ones(n)
    return (np.trace(k @ l) + (one @ k @ one) * (one @ l @ one) / ((n - 1) * (n - 2))
            - 2 / (n - 2) * one @ k @ l @ one) / (n * (n - 3))


def test_unbiased_hsic_equals_the_gram_matrix_formula():
    x, y = _z(30, 5, 1), _z(30, 8, 2)[:, :8]
    assert hsic_unbiased(x, y) == pytest.approx(_hsic_numpy(x.numpy(), y.numpy()), rel=1e-10)
    assert hsic_unbiased(x, x) == pytest.approx(_hsic_numpy(x.numpy(), x.numpy()), rel=1e-10)


def test_cka_of_itself_and_of_a_rotation_is_one_and_of_independent_noise_near_zero():
    x = _z(300, 10, 3)
    q, _ = torch.linalg.qr(torch.randn(10, 10, dtype=torch.float64, generator=torch.Generator().manual_seed(4)))
    assert linear_cka(x, x) == pytest.approx(1.0, abs=1e-12)
    assert linear_cka(x, 2.5 * x @ q) == pytest.approx(1.0, abs=1e-10)
    noise = torch.randn(300, 10, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    assert abs(linear_cka(x, noise)) < 0.05
    m = cka_matrix([x, x @ q, noise])
    assert m.shape == (3, 3) and torch.allclose(m, m.T) and m[0, 1] == pytest.approx(1.0, abs=1e-10)
    with pytest.raises(ValueError, match="n >= 4"):
        hsic_unbiased(x[:3], x[:3])


# -- neural collapse -----------------------------------------------------------------


def _etf(c, d, seed=0):
    g = torch.Generator().manual_seed(seed)
    p, _ = torch.linalg.qr(torch.randn(d, c, generator=g, dtype=torch.float64))
    return (math.sqrt(c / (c - 1)) * p @ (torch.eye(c, dtype=torch.float64) - 1.0 / c)).T  # C x d


def test_perfect_collapse_onto_a_simplex_etf_scores_zero_and_agrees_with_the_nearest_centre():
    c, d = 5, 12
    m = _etf(c, d)
    y = torch.arange(c).repeat(20)
    h = 3.0 * m[y] + torch.ones(d, dtype=torch.float64)  # every sample at its class mean, global mean shifted
    out = neural_collapse(h, y, 2.0 * m)  # the classifier is the means (self-dual)
    assert out["nc1"] == pytest.approx(0.0, abs=1e-20)
    for key in ("nc2_means", "nc2_classifier"):
        assert all(v == pytest.approx(0.0, abs=1e-12) for v in out[key].values()), out[key]
    assert out["nc3"] == pytest.approx(0.0, abs=1e-20) and out["nc4"] == 1.0 and out["classes"] == c


def test_nc1_by_hand_and_nc2_nc3_away_from_collapse():
    # two classes in 1-d: means -1 and 1, within-class deviations +-0.5
    h = torch.tensor([[-1.5], [-0.5], [0.5], [1.5]], dtype=torch.float64)
    y = torch.tensor([0, 0, 1, 1])
    out = neural_collapse(h, y, torch.tensor([[-1.0], [1.0]], dtype=torch.float64))
    # Sigma_W = 0.25, Sigma_B = 1, NC1 = tr(0.25 / 1) / 2
    assert out["nc1"] == pytest.approx(0.125) and out["nc4"] == 1.0
    g = torch.Generator().manual_seed(0)
    h = torch.randn(90, 8, generator=g, dtype=torch.float64)
    y = torch.arange(3).repeat(30)
    out = neural_collapse(h, y, torch.randn(3, 8, generator=g, dtype=torch.float64))
    assert out["nc1"] > 1 and out["nc3"] > 0.1 and out["nc2_means"]["equinorm"] > 0


def test_cka_is_exact_for_large_means_and_nan_for_a_constant_representation():
    """Kornblith et al. centre the features first; the unbiased HSIC of centred features,
    written out (Song et al. 2012): K~ = XX^T with zero diagonal, HSIC_1 =
    [tr(K~L~) + 1^T K~ 1 1^T L~ 1 / ((n-1)(n-2)) - 2/(n-2) 1^T K~ L~ 1] / (n(n-3))."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(60, 8, generator=g, dtype=torch.float64)
    y = x @ torch.randn(8, 5, generator=g, dtype=torch.float64) + torch.randn(60, 5, generator=g, dtype=torch.float64)

    def hsic(a, b):
        a, b = a.numpy() - a.numpy().mean(0), b.numpy() - b.numpy().mean(0)
        n = len(a)
        kt, lt = a @ a.T, b @ b.T
        np.fill_diagonal(kt, 0)
        np.fill_diagonal(lt, 0)
        one = np.ones(n)
        return (np.trace(kt @ lt) + one @ kt @ one * (one @ lt @ one) / ((n - 1) * (n - 2))
                - 2 / (n - 2) * one @ kt @ lt @ one) / (n * (n - 3))

    ref = hsic(x, y) / np.sqrt(hsic(x, x) * hsic(y, y))
    for o in (0.0, 1e2, 1e3, 1e4):
        assert linear_cka(x + o, y + o) == pytest.approx(ref, abs=1e-9), o
    zeros = torch.zeros_like(x)
    assert math.isnan(linear_cka(x, zeros))
    m = cka_matrix([x, zeros, y])
    assert math.isnan(m[0, 1]) and math.isnan(m[1, 1]) and m[0, 2] == pytest.approx(ref, abs=1e-9)


def test_equinorm_uses_the_unbiased_std_as_papyan_et_al():
    from collapse_lab.spectra.neural_collapse import neural_collapse

    g = torch.Generator().manual_seed(1)
    c, d = 4, 6
    means = torch.randn(c, d, generator=g, dtype=torch.float64) * torch.tensor([1.0, 2, 3, 4], dtype=torch.float64)[:, None]
    y = torch.arange(c).repeat_interleave(5)
    h = means[y] + 0.01 * torch.randn(len(y), d, generator=g, dtype=torch.float64)
    out = neural_collapse(h, y, torch.randn(c, d, generator=g, dtype=torch.float64))
    mu = np.stack([h.numpy()[y.numpy() == k].mean(0) for k in range(c)])
    norms = np.linalg.norm(mu - mu.mean(0), axis=1)
    assert out["nc2_means"]["equinorm"] == pytest.approx(norms.std(ddof=1) / norms.mean(), rel=1e-10)
