"""FedUV (Son et al. 2024, supplementary Alg. 1): hyperspherical uniformity + variance.

    u(z) = mean over pairs i < j of exp(-||z_i - z_j||^2 / sigma),
           sigma = median of the nonzero pairwise squared distances of the batch
           (torch.median as in the pseudocode: the lower middle value for an even count)
    v(p) = mean_c relu(c* - std_n(p_nc)),  p = softmax(logits), std over the batch
           (unbiased, torch's default as in the pseudocode), c* = mean column std of I_C
           = 1/sqrt(C)
    R    = mu * u + lam * v,  defaults mu = 1, lam = C/5 (the pseudocode's values)

The pseudocode one-hots the predictions before the softmax; a one-hot has no gradient,
so the variance term would never train anything. We take the softmax of the logits
instead. As in the pseudocode sigma is not detached. ``--beta`` multiplies R (default 1).
A batch with no nonzero distance (one sample, or all equal) has u = 0.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from . import REGULARIZERS


def uniformity_loss(z: torch.Tensor) -> torch.Tensor:
    d2 = torch.pdist(z, p=2).pow(2)
    nz = d2[d2 != 0]
    if nz.numel() == 0:
        return z.sum() * 0.0
    sigma = torch.median(nz)
    return torch.exp(-d2 / sigma).mean()


def ideal_std(num_classes: int) -> float:
    return torch.eye(num_classes, dtype=torch.float64).std(dim=0).mean().item()


def variance_loss(logits: torch.Tensor) -> torch.Tensor:
    if logits.shape[0] < 2:
        return logits.sum() * 0.0
    p = F.softmax(logits.float(), dim=1)
    return F.relu(ideal_std(logits.shape[1]) - p.std(dim=0)).mean()


def _derive(opts, num_classes):
    if opts["lam"] is None:
        opts = {**opts, "lam": num_classes / 5}
    return opts


@REGULARIZERS.register("feduv", defaults={"mu": 1.0, "lam": None}, beta=1.0, derive=_derive, graph_safe=False)
def feduv(mu=1.0, lam=None):
    def reg(z, logits):
        lam_ = lam if lam is not None else logits.shape[1] / 5
        return mu * uniformity_loss(z.float()) + lam_ * variance_loss(logits)

    return reg
