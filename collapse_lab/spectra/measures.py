"""Every number the analyses report for one model's representations, computed in one
place (the ``spectrum`` command, the report and the Python API call this): the count above
tau and the effective rank (FedDecorr Sec. 3.1), the top-10 variance share, and, given the
representations, dead units, RankMe (Garrido et al. 2023, Eq. 1), the stable rank and
alpha-ReQ (Agrawal et al. 2022); given the classifier, its singular values (FedUV)."""
from __future__ import annotations

import torch

from .functional import DEFAULT_TAU, effective_rank, n_significant, variance_share

TOP = 100  # singular values kept in a record (the papers plot the top 100)


def measures(sv: torch.Tensor, floor: float, tau: float = DEFAULT_TAU, z: torch.Tensor | None = None,
             classifier: torch.Tensor | None = None) -> dict:
    """The numbers of one spectrum ``sv`` (descending, float64; ``floor`` its numerical
    floor); with the representations ``z`` (N x d) also dead units and the rank measures;
    with the classifier's weight (C x d) its singular values."""
    from .rank import alpha_req, dead_units, rankme, stable_rank

    out = {"singular_values": sv[:TOP].tolist(), "n_significant": n_significant(sv, tau), "tau": tau,
           "effective_rank": effective_rank(sv, floor), "top10_variance_share": variance_share(sv, 10),
           "floor": floor, "dim": len(sv)}
    if z is not None:
        dead = dead_units(z)
        out.update(dead_units=len(dead), dead_unit_indices=dead.tolist(), dead_share=len(dead) / max(len(sv), 1),
                   rankme=rankme(z), stable_rank=stable_rank(sv), alpha_req=alpha_req(sv, floor))
    if classifier is not None:
        out["classifier_singular_values"] = torch.linalg.svdvals(classifier.to(torch.float64)).tolist()
    return out
