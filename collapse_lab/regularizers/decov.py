"""Covariance-based decorrelation, the two baselines of FedDecorr App. C.2 (Table 6).

``decov`` (Cogswell et al. 2016, Eq. 1): with C the batch covariance of z,
C_ij = (1/N) sum_n (z_ni - mean_i)(z_nj - mean_j),

    L_DeCov = 1/2 (||C||_F^2 - ||diag(C)||_2^2),

half the squared Frobenius norm of C's off-diagonal part.

``structured-decov`` (Xiong et al. 2016, Structured Decorrelation Constraint): the d units
are split into ``groups`` contiguous groups of near-equal size; units in different groups
are decorrelated and units within a group are left free to co-vary:

    L_SDC = 1/2 sum_{i, j in different groups} C_ij^2.

Xiong et al.'s paper is not in our set; this follows their description ("minimizing
the cross-covariance between groups"; "units within the same group ... strong
connections"), without a term that rewards within-group covariance. ``groups`` = 4 is
our choice, not a published value. Both act on the covariance, not the correlation, so
their scale follows the scale of z (FedDecorr App. C.2 finds both unstable in FL).
"""
from __future__ import annotations

import torch

from ..errors import CollapseLabError
from . import REGULARIZERS


def batch_covariance(z: torch.Tensor) -> torch.Tensor:
    zc = z - z.mean(dim=0, keepdim=True)
    return zc.T @ zc / z.shape[0]


def decov_loss(z: torch.Tensor) -> torch.Tensor:
    c = batch_covariance(z.float() if z.dtype in (torch.float16, torch.bfloat16) else z)
    return 0.5 * (c.pow(2).sum() - torch.diagonal(c).pow(2).sum())


def group_ids(d: int, groups: int, device=None) -> torch.Tensor:
    """Unit i belongs to group floor(i * groups / d): contiguous, sizes differ by at most one."""
    return torch.arange(d, device=device) * groups // d


def structured_decov_loss(z: torch.Tensor, groups: int) -> torch.Tensor:
    c = batch_covariance(z.float() if z.dtype in (torch.float16, torch.bfloat16) else z)
    g = group_ids(z.shape[1], groups, z.device)
    cross = g[:, None] != g[None, :]
    return 0.5 * c.pow(2).masked_fill(~cross, 0.0).sum()


@REGULARIZERS.register("decov", beta=0.1)
def decov():
    return lambda z, logits=None: decov_loss(z)


def _check_groups(opts, num_classes):
    if opts["groups"] < 2 or opts["groups"] != int(opts["groups"]):
        raise CollapseLabError("structured-decov groups must be a whole number >= 2")
    return {**opts, "groups": int(opts["groups"])}


@REGULARIZERS.register("structured-decov", defaults={"groups": 4}, beta=0.1, derive=_check_groups)
def structured_decov(groups=4):
    g = int(groups)
    return lambda z, logits=None: structured_decov_loss(z, g)
