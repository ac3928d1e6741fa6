"""Theorem 1 of FedDecorr (App. A) on an (L+1)-layer linear network trained by gradient descent.

Notation of App. A: X (d_in x N), one-hot labels Y (C x N), Pi(t) = W_L ... W_1 with SVD
Pi = sum_k sigma_k u_k v_k^T, W_{L+1} = sum_k sigma_{L+1,k} u_{L+1,k} v_{L+1,k}^T,
Gamma(t) the softmax outputs, the summed loss of Eq. 35, and

    G(t) = sum_c mu_c (e_c - gamma_bar_c(t)) X_bar_c^T            (Eq. 4 / 33 / 47)

Eq. 40, first line after the SVD step (holds under Assumption 1, balanced layers):
    d sigma_k / dt = L sigma_k^(2 - 2/L) u_k^T W_{L+1}^T (Y - Gamma) X^T v_k
Eq. 46 / 32 (adds Assumption 2, |u_k^T v_{L+1,k'}| = 1{k = k'}):
    d sigma_k / dt = N L sigma_k^(2 - 2/L) sqrt(sigma_k^(2/L) + M_k) u_{L+1,k}^T G v_k
with M_k = sigma_{L+1,k}^2 - sigma_k^(2/L), constant in time by Eq. 42-43. (The main
text's Eq. 3 puts the square root around the whole product; Eq. 32 is the precise form.)

Eq. 45 equates (Y - Gamma) X^T with N G(t); that holds only when gamma_i is the same for
every sample of a class (sum_i gamma_i X_i^T is not N_c gamma_bar_c X_bar_c^T), so G(t) of
Eq. 4 is an approximation, whose relative size is recorded.

Eq. 40, last line (Assumption 2 at time t, no constant M):
    d sigma_k / dt = L sigma_k^(2 - 2/L) sigma_{L+1,k} u_{L+1,k}^T (Y - Gamma) X^T v_k

Gradient descent with step eta discretises the flow at times t = s * eta; the measured
derivative is the central difference (sigma(s+1) - sigma(s-1)) / (2 eta).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from ...spectra.functional import effective_rank


def balanced_init(d_in: int, width: int, classes: int, depth: int, scale: float, gen: torch.Generator):
    """W_1..W_L satisfying Assumption 1 exactly, W_{i+1}^T W_{i+1} = W_i W_i^T, and a random W_{L+1}.

    All of W_1..W_L share the singular values S: W_1 = U_1 S V^T, W_i = U_i S U_{i-1}^T
    with orthogonal U_i, so W_i^T W_i = U_{i-1} S^2 U_{i-1}^T = W_{i-1} W_{i-1}^T.
    """
    if width > d_in:
        raise ValueError("width must be <= input dimension for this construction")

    def orth(n, m):
        q, r = torch.linalg.qr(torch.randn(n, m, generator=gen, dtype=torch.float64))
        return q * torch.sign(torch.diagonal(r))

    s = torch.diag(scale * (0.5 + torch.rand(width, generator=gen, dtype=torch.float64)))
    us = [orth(width, width) for _ in range(depth)]
    ws = [us[0] @ s @ orth(d_in, width).T]
    for i in range(1, depth):
        ws.append(us[i] @ s @ us[i - 1].T)
    head = scale * torch.randn(classes, width, generator=gen, dtype=torch.float64) / np.sqrt(width)
    return ws, head


def product(ws):
    p = ws[0]
    for w in ws[1:]:
        p = w @ p
    return p


def alignment_matrix(pi: torch.Tensor, head: torch.Tensor, n: int) -> torch.Tensor:
    """Fig. 6: |u_k^T v_{L+1,k'}| for k, k' <= n, u_k left singular vectors of Pi, v_{L+1,k'}
    right singular vectors of W_{L+1} (Assumption 2 says this is the identity)."""
    u = torch.linalg.svd(pi, full_matrices=False)[0]
    vh = torch.linalg.svd(head, full_matrices=True)[2]
    return (u[:, :n].T @ vh[:n, :].T).abs()


def class_G(x: torch.Tensor, y: torch.Tensor, gamma: torch.Tensor, classes: int) -> torch.Tensor:
    """Eq. 4 from its definition: sum over present classes of mu_c (e_c - gamma_bar_c) X_bar_c^T."""
    n = x.shape[1]
    g = torch.zeros(classes, x.shape[0], dtype=torch.float64)
    for c in range(classes):
        mask = y == c
        nc = int(mask.sum())
        if nc == 0:
            continue
        e = torch.zeros(classes, dtype=torch.float64)
        e[c] = 1.0
        g += (nc / n) * torch.outer(e - gamma[:, mask].mean(dim=1), x[:, mask].mean(dim=1))
    return g


@dataclass
class FlowResult:
    eta: float
    depth: int
    times: list = field(default_factory=list)
    sigma: list = field(default_factory=list)  # sigma_k at record times
    eq40_rel: list = field(default_factory=list)  # relative error of Eq. 40 per record time (vector norm over k)
    eq46_rel: list = field(default_factory=list)
    eq40_per_k: list = field(default_factory=list)
    eq46_per_k: list = field(default_factory=list)
    eq40_last_per_k: list = field(default_factory=list)  # Eq. 40's last line: Assumption 2 at time t
    G_rank: list = field(default_factory=list)  # effective rank of G(t)
    G_sv: list = field(default_factory=list)
    G_exact_rank: list = field(default_factory=list)  # effective rank of (Y - Gamma) X^T / N
    G_approx_rel: list = field(default_factory=list)  # ||G_Eq4 - (Y - Gamma) X^T / N|| / ||(Y - Gamma) X^T / N||
    M_drift: float = 0.0
    balance_drift: float = 0.0
    alignment: dict = field(default_factory=dict)  # time -> |u_k^T v_{L+1,k'}| matrix
    loss: list = field(default_factory=list)
    sigma_all: np.ndarray | None = None


def simulate(x: torch.Tensor, y: torch.Tensor, classes: int, depth: int = 2, width: int = 32, scale: float = 0.3,
             eta: float = 1e-4, steps: int = 2000, records: int = 20, align_at: tuple[float, ...] = (0.0, 0.5, 1.0),
             align_size: int = 10, seed: int = 0) -> FlowResult:
    """Full-batch gradient descent on the summed cross-entropy (Eq. 35), x: d_in x N, y: N labels."""
    gen = torch.Generator().manual_seed(seed)
    x = x.to(torch.float64)
    n = x.shape[1]
    yoh = torch.nn.functional.one_hot(y, classes).T.to(torch.float64)  # C x N
    ws, head = balanced_init(x.shape[0], width, classes, depth, scale, gen)
    params = [w.clone().requires_grad_(True) for w in ws] + [head.clone().requires_grad_(True)]
    kmax = min(classes, width)
    record_steps = sorted({int(round(s)) for s in np.linspace(1, steps - 1, records)})
    align_steps = {int(round(a * (steps - 1))): a for a in align_at}
    sig_traj = np.zeros((steps + 1, width))
    res = FlowResult(eta=eta, depth=depth)
    m0 = None
    pending = {}
    for s in range(steps + 1):
        with torch.no_grad():
            ws_now, head_now = [p.detach() for p in params[:-1]], params[-1].detach()
            pi = product(ws_now)
            u, sig, vh = torch.linalg.svd(pi, full_matrices=False)
            sig_traj[s] = sig.numpy()
            uh, sh, vhh = torch.linalg.svd(head_now, full_matrices=True)
            sh_full = torch.zeros(width, dtype=torch.float64)
            sh_full[: len(sh)] = sh
            # Pair sign: make u_k^T v_{L+1,k} >= 0 (the proof's Assumption 2 step takes +1).
            sgn = torch.sign(torch.einsum("ik,ki->k", u[:, :kmax], vhh[:kmax, :]))
            sgn[sgn == 0] = 1
            if m0 is None:
                m0 = (sh_full[:kmax] ** 2 - sig[:kmax] ** (2.0 / depth)).clone()
            if s in record_steps or s in align_steps:
                logits = head_now @ pi @ x
                gamma = torch.softmax(logits, dim=0)
                resid = (yoh - gamma) @ x.T  # (Y - Gamma) X^T, C x d_in
                g = class_G(x, y, gamma, classes)
                if s in record_steps:
                    pending[s] = _predicted(x, y, yoh, logits, gamma, resid, g, u, sig, vh, uh, sgn, sh_full, m0,
                                            head_now, depth, kmax, n)
                if s in align_steps:
                    res.alignment[round(s * eta, 10)] = alignment_matrix(pi, head_now, align_size).numpy()
            if s == steps:
                res.M_drift, res.balance_drift = _drifts(ws_now, sh_full, sig, m0, depth, kmax)
                break
        _descend(params, x, y, eta)
    res.sigma_all = sig_traj
    _record(res, pending, sig_traj, record_steps, kmax, eta)
    return res


def _descend(params: list[torch.Tensor], x: torch.Tensor, y: torch.Tensor, eta: float) -> None:
    """One full-batch gradient-descent step of every factor on the summed cross-entropy (Eq. 35)."""
    logits = params[-1] @ product(params[:-1]) @ x
    loss = torch.nn.functional.cross_entropy(logits.T, y, reduction="sum")  # Eq. 35: summed
    grads = torch.autograd.grad(loss, params)
    with torch.no_grad():
        for p, gr in zip(params, grads):
            p -= eta * gr


def _predicted(x, y, yoh, logits, gamma, resid, g, u, sig, vh, uh, sgn, sh_full, m0, head_now, depth: int,
               kmax: int, n: int) -> tuple:
    """At a recorded step: d sigma_k/dt as Eq. 40 (two forms) and Eq. 46 predict it, Eq. 4's
    G and its error against (Y - Gamma) X^T / N, that matrix's singular values, the loss."""
    pow_ = sig[:kmax] ** (2.0 - 2.0 / depth)
    pred40 = depth * pow_ * torch.einsum("ik,ij,jl,lk->k", u[:, :kmax], head_now.T, resid, vh[:kmax].T)
    uhk = uh[:, :kmax] * sgn  # u_{L+1,k} with the paired sign
    root = (sig[:kmax] ** (2.0 / depth) + m0).clamp_min(0).sqrt()
    pred46 = n * depth * pow_ * root * torch.einsum("ik,ij,jk->k", uhk, g, vh[:kmax].T)
    # Eq. 40 last line: L sigma_k^(2-2/L) sigma_{L+1,k} u_{L+1,k}^T (Y - Gamma) X^T v_k
    pred40b = depth * pow_ * sh_full[:kmax] * torch.einsum("ik,ij,jk->k", uhk, resid, vh[:kmax].T)
    g_exact = resid / n
    g_err = float((g - g_exact).norm() / g_exact.norm().clamp_min(1e-300))
    gsv_exact = torch.linalg.svdvals(g_exact)
    loss = float(torch.nn.functional.cross_entropy(logits.T, y, reduction="sum"))
    return pred40.numpy(), pred46.numpy(), pred40b.numpy(), g, g_err, gsv_exact, loss


def _drifts(ws_now, sh_full, sig, m0, depth: int, kmax: int) -> tuple[float, float]:
    """At the last step: the relative drift of the conserved M (Eq. 33) and the largest
    departure from balance between consecutive layers."""
    m_end = sh_full[:kmax] ** 2 - sig[:kmax] ** (2.0 / depth)
    m_drift = float((m_end - m0).abs().max() / m0.abs().max().clamp_min(1e-300))
    drift = 0.0
    for i in range(depth - 1):
        a, b = ws_now[i + 1].T @ ws_now[i + 1], ws_now[i] @ ws_now[i].T
        drift = max(drift, float((a - b).norm() / b.norm()))
    return m_drift, drift


def _record(res: FlowResult, pending: dict, sig_traj: np.ndarray, record_steps, kmax: int, eta: float) -> None:
    """The recorded steps against the measured d sigma_k/dt (central differences)."""
    for s in record_steps:
        pred40, pred46, pred40b, g, g_err, gsv_exact, loss_val = pending[s]
        res.G_approx_rel.append(g_err)
        res.G_exact_rank.append(effective_rank(gsv_exact, float(gsv_exact[0]) * 1e-12))
        meas = (sig_traj[s + 1, :kmax] - sig_traj[s - 1, :kmax]) / (2 * eta)
        res.times.append(s * eta)
        res.sigma.append(sig_traj[s, :kmax].tolist())
        res.eq40_rel.append(float(np.linalg.norm(meas - pred40) / max(np.linalg.norm(pred40), 1e-300)))
        res.eq46_rel.append(float(np.linalg.norm(meas - pred46) / max(np.linalg.norm(meas), 1e-300)))
        res.eq40_per_k.append((np.abs(meas - pred40) / np.maximum(np.abs(pred40), 1e-300)).tolist())
        res.eq46_per_k.append((np.abs(meas - pred46) / np.maximum(np.abs(meas), 1e-300)).tolist())
        res.eq40_last_per_k.append((np.abs(meas - pred40b) / np.maximum(np.abs(meas), 1e-300)).tolist())
        gsv = torch.linalg.svdvals(g)
        res.G_sv.append(gsv.tolist())
        res.G_rank.append(effective_rank(gsv, float(gsv[0]) * 1e-12 if len(gsv) else 0.0))
        res.loss.append(loss_val)


def growing(sigma_all: np.ndarray, k: int, factor: float) -> int:
    """How many of the first k singular values of Pi grew by at least ``factor`` over the run."""
    return int((sigma_all[-1, :k] >= factor * sigma_all[0, :k]).sum())
