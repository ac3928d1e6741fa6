"""FedUV (Son et al. 2024, supplementary Alg. 1): hyperspherical uniformity + variance.

    u(z) = mean over pairs i < j of exp(-||z_i - z_j||^2 / sigma),
           sigma = median of the nonzero pairwise squared distances of the batch
           (torch.median as in the pseudocode: the lower middle value for an even count)
    v(p) = mean_c relu(c* - std_n(p_nc)),  p = softmax(logits), std over the batch
           (unbiased, torch's default as in the pseudocode), c* = mean column std of I_C
           = 1/sqrt(C)
    R    = mu * u + lam * v,  defaults mu = 1, lam = C/5 (the pseudocode's values)

The variance term's variants (FedUV Table 6), option ``hinge``: 1 = the hinge above
(FedUV, the default), 2 = squared hinge, mean_c relu(c* - std)^2, 0 = no hinge,
mean_c (c* - std). The default is left out of a run's resolved options, so runs stored
before the option existed keep their folder names.

The pseudocode one-hots the predictions before the softmax; a one-hot has no gradient,
so the variance term would never train anything. We take the softmax of the logits
instead. As in the pseudocode sigma is not detached. ``--beta`` multiplies R (default 1).
A batch with no nonzero distance (one sample, or all equal) has u = 0.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ..errors import CollapseLabError
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


HINGES = {0: "no hinge", 1: "hinge", 2: "squared hinge"}


def variance_loss(logits: torch.Tensor, hinge: int = 1) -> torch.Tensor:
    if logits.shape[0] < 2:
        return logits.sum() * 0.0
    p = F.softmax(logits.float(), dim=1)
    gap = ideal_std(logits.shape[1]) - p.std(dim=0)
    if hinge == 0:
        return gap.mean()
    return F.relu(gap).pow(hinge).mean()


def _derive(opts, num_classes):
    if opts["lam"] is None:
        opts = {**opts, "lam": num_classes / 5}
    h = opts.get("hinge")
    if h is not None and h not in HINGES:
        raise CollapseLabError(f"--reg-option hinge={h:g}: use 1 (hinge, FedUV), 2 (squared hinge) or 0 (no hinge)")
    if h == 1:  # the default stays out of the resolved options (folder names of earlier runs)
        opts = {k: v for k, v in opts.items() if k != "hinge"}
    return opts


@REGULARIZERS.register("feduv", defaults={"mu": 1.0, "lam": None, "hinge": 1}, beta=1.0, derive=_derive,
                       graph_safe=False)
def feduv(mu=1.0, lam=None, hinge=1):
    hinge = int(hinge)

    def reg(z, logits):
        lam_ = lam if lam is not None else logits.shape[1] / 5
        return mu * uniformity_loss(z.float()) + lam_ * variance_loss(logits, hinge)

    return reg
