"""Neural-collapse metrics NC1-NC4 (Papyan, Han & Donoho 2020, Sec. 3 and Fig. 2-7), in
float64, from the representations h (N x d), labels y and the last layer (W: C x d, b).

With the class means mu_c, the global mean mu_G (the mean of the class means, as Papyan
et al.'s balanced sets give) and the centred means M = [mu_c - mu_G]:

- NC1, within-class variability collapse: tr(Sigma_W Sigma_B^+) / C, Sigma_W the mean over
  samples of (h - mu_y)(h - mu_y)^T, Sigma_B = (1/C) sum_c (mu_c - mu_G)(mu_c - mu_G)^T.
- NC2, convergence to a simplex ETF, of the centred means and of the classifier rows:
  ``equinorm`` std/mean of the norms (the unbiased std, 1/(C-1), as Papyan et al.'s code), ``equiangular`` the std of the pairwise cosines
  (c != c'), ``max_angle`` the mean of |cos + 1/(C-1)| (0 for a simplex ETF).
- NC3, self-duality: || W/||W||_F - M^T/||M||_F ||_F^2 (W's rows against the centred means).
- NC4, the nearest-class-centre rule: the share of samples whose classifier prediction is
  the class with the nearest mean (1 when collapsed).

Classes without samples are left out of every measure.
"""
from __future__ import annotations

import torch


def _geometry(v: torch.Tensor) -> dict:
    """NC2's three numbers for the rows of v (C' x d)."""
    norms = v.norm(dim=1)
    c = len(v)
    cos = (v / norms[:, None]) @ (v / norms[:, None]).T
    off = cos[~torch.eye(c, dtype=torch.bool)]
    # equinorm with the unbiased std, as Papyan et al.'s code (sqrt(C/(C-1)) x the 1/C one)
    return {"equinorm": float(norms.std(correction=1) / norms.mean()), "equiangular": float(off.std(correction=0)),
            "max_angle": float((off + 1.0 / (c - 1)).abs().mean())}


def class_means(h: torch.Tensor, y: torch.Tensor, num_classes: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(C x d means, C bool: the class has samples), float64."""
    h = h.detach().to("cpu", torch.float64)
    y = y.detach().to("cpu").long()
    sums = torch.zeros(num_classes, h.shape[1], dtype=torch.float64).index_add_(0, y, h)
    counts = torch.bincount(y, minlength=num_classes).to(torch.float64)
    has = counts > 0
    return sums / counts.clamp_min(1)[:, None], has


def neural_collapse(h: torch.Tensor, y: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None
                    ) -> dict:
    """NC1-NC4 of representations h with labels y and the classifier (weight, bias)."""
    c = weight.shape[0]
    h64 = h.detach().to("cpu", torch.float64)
    y = y.detach().to("cpu").long()
    w = weight.detach().to("cpu", torch.float64)
    mu, has = class_means(h64, y, c)
    mu, w_p = mu[has], w[has]
    mu_g = mu.mean(0)
    m = mu - mu_g  # C' x d
    dev = h64 - class_means(h64, y, c)[0][y]
    sigma_w = dev.T @ dev / len(y)
    sigma_b = m.T @ m / len(m)
    nc1 = float(torch.trace(sigma_w @ torch.linalg.pinv(sigma_b, hermitian=True)) / len(m))
    nc3 = float((w_p / w_p.norm() - m / m.norm()).pow(2).sum())
    logits = h64 @ w.T + (0.0 if bias is None else bias.detach().to("cpu", torch.float64))
    present = torch.nonzero(has).flatten()
    ncc = present[torch.cdist(h64, mu).argmin(1)]
    nc4 = float((logits.argmax(1) == ncc).double().mean())
    return {"nc1": nc1, "nc2_means": _geometry(m), "nc2_classifier": _geometry(w_p), "nc3": nc3, "nc4": nc4,
            "classes": int(has.sum())}


__all__ = ["class_means", "neural_collapse"]
