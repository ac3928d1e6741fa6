"""Proposition 1 and the pieces of Theorem 1 against independent computations."""
from __future__ import annotations

import pytest
import torch

from collapse_lab.linalg import correlation_matrix
from collapse_lab.analysis.theory.linear_flow import alignment_matrix, balanced_init, class_G, product, simulate
from collapse_lab.analysis.theory.prop1 import check_random, prop1_sides, relative_error


def test_prop1_hand_example():
    r = 0.6
    k = torch.tensor([[1.0, r], [r, 1.0]], dtype=torch.float64)  # eigenvalues 1 +- r
    lhs, rhs = prop1_sides(k)
    assert lhs == pytest.approx(2 * r * r, rel=1e-14) and rhs == pytest.approx(2 * r * r, rel=1e-14)


def test_prop1_random_and_data_correlation():
    rows = check_random(sizes=(3, 17, 100, 400), per_size=2, seed=1)
    assert max(r["rel_error"] for r in rows) < 1e-10
    assert max(r["max_diag_error"] for r in rows) < 1e-10  # they are correlation matrices
    z = torch.randn(200, 30, dtype=torch.float64) @ torch.randn(30, 30, dtype=torch.float64)
    lhs, rhs = prop1_sides(correlation_matrix(z))
    assert relative_error(lhs, rhs) < 1e-10


def test_prop1_fails_for_non_correlation_matrices():
    """The identity needs a unit diagonal: a covariance matrix breaks it (the check can fail)."""
    z = torch.randn(200, 10, dtype=torch.float64) * torch.arange(1, 11, dtype=torch.float64)
    cov = torch.cov(z.T)
    lhs, rhs = prop1_sides(cov)
    assert relative_error(lhs, rhs) > 1e-3


def test_balanced_init_satisfies_assumption_1():
    ws, head = balanced_init(20, 8, 5, 3, 0.5, torch.Generator().manual_seed(0))
    assert [tuple(w.shape) for w in ws] == [(8, 20), (8, 8), (8, 8)] and tuple(head.shape) == (5, 8)
    for i in range(2):
        a, b = ws[i + 1].T @ ws[i + 1], ws[i] @ ws[i].T
        assert torch.allclose(a, b, atol=1e-13)


def test_G_matches_residual_form_only_when_gamma_is_constant_per_class():
    """Eq. 45 writes (Y - Gamma) X^T = N sum_c mu_c (e_c - gamma_bar_c) X_bar_c^T. That holds when
    gamma is the same for every sample of a class, and not in general (the mean of
    products gamma_i X_i^T is not the product of the means)."""
    g = torch.Generator().manual_seed(1)
    x = torch.randn(6, 40, generator=g, dtype=torch.float64)
    y = torch.randint(0, 4, (40,), generator=g)
    y[:4] = torch.tensor([0, 1, 2, 3])
    yoh = torch.nn.functional.one_hot(y, 4).T.double()
    per_class = torch.softmax(torch.randn(4, 4, generator=g, dtype=torch.float64), dim=0)
    gamma = per_class[:, y]  # constant within each class: exact
    assert torch.allclose(40 * class_G(x, y, gamma, 4), (yoh - gamma) @ x.T, atol=1e-12)
    gamma = torch.softmax(torch.randn(4, 40, generator=g, dtype=torch.float64), dim=0)  # varies: not exact
    assert not torch.allclose(40 * class_G(x, y, gamma, 4), (yoh - gamma) @ x.T, atol=1e-3)


def test_alignment_of_aligned_construction_is_identity():
    g = torch.Generator().manual_seed(2)
    d, din, c = 6, 9, 6
    q, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))
    v, _ = torch.linalg.qr(torch.randn(din, d, generator=g, dtype=torch.float64))
    p, _ = torch.linalg.qr(torch.randn(c, c, generator=g, dtype=torch.float64))
    s = torch.tensor([6.0, 5, 4, 3, 2, 1], dtype=torch.float64)
    pi = q @ torch.diag(s) @ v.T  # left singular vectors: columns of q
    head = p @ torch.diag(s + 0.5) @ q.T  # right singular vectors: the same columns of q
    a = alignment_matrix(pi, head, 6)
    assert torch.allclose(a, torch.eye(6, dtype=torch.float64), atol=1e-12)
    # and a misaligned head is not the identity
    head2 = p @ torch.diag(s + 0.5) @ torch.flip(q, dims=[1]).T
    assert not torch.allclose(alignment_matrix(pi, head2, 6), torch.eye(6, dtype=torch.float64), atol=0.1)


def test_eq40_identity_small_step():
    """Eq. 40 (Assumption 1 only) matches the measured d sigma/dt to < 1% with a small step,
    and the error shrinks in proportion to the step (first-order discretisation of the flow)."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(10, 30, generator=g, dtype=torch.float64)
    y = torch.randint(0, 3, (30,), generator=g)
    errs = []
    for eta in (1e-3, 2.5e-4):
        res = simulate(x, y, 3, depth=2, width=4, scale=0.5, eta=eta, steps=int(0.2 / eta), records=5)
        errs.append(max(res.eq40_rel))
        assert res.balance_drift < 0.05
    assert errs[1] < 0.01
    assert 3.2 < errs[0] / errs[1] < 4.8  # 4x smaller step, 4x smaller error


def test_product_order():
    a, b = torch.randn(3, 4, dtype=torch.float64), torch.randn(2, 3, dtype=torch.float64)
    assert torch.allclose(product([a, b]), b @ a)
