"""FedAwS (Yu et al. 2020, "Federated Learning with Only Positive Labels", Alg. 1):
FedAvg, then the server spreads the class embeddings (the classifier's weight rows) apart
with a few SGD steps on the spreadout regularizer

    reg_sp(W) = mean_{c, c'} ( relu(nu - d(w_c, w_c')) )^2,   c != c' (d = 0 on the diagonal),
    d(w_c, w_c') = (1 - cos(w_c, w_c')) / 2,

in the form of the released code of FedRS's authors (whose scenes and baseline list FedETF
Table 1 follows): cosine distance between the normalised rows, mean over the C x C
entries. The paper's Eq. 6 writes a sum of squared hinge terms on the distance of the
embeddings; on unit-norm rows the cosine distance is a quarter of the squared Euclidean
one. Steps: ``steps`` of SGD with momentum 0.9 and learning rate ``lr`` from a fresh
optimizer each round (no state across rounds). Defaults (released code's grid, first
value): nu = 0.8, 30 steps, lr 0.1. The classifier bias, if any, is left alone.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ..errors import CollapseLabError
from . import METHODS, Method, fedavg_of


def spreadout_loss(w: torch.Tensor, margin: float) -> torch.Tensor:
    wn = F.normalize(w, dim=1)
    d = 0.5 * (1.0 - wn @ wn.T)
    d = d * (1.0 - torch.eye(w.shape[0], dtype=w.dtype, device=w.device))
    return F.relu(margin - d).pow(2).mean()


def spread_out(w: torch.Tensor, margin: float, steps: int, lr: float) -> torch.Tensor:
    """The server's SGD (momentum 0.9) on ``spreadout_loss``; returns the new weight."""
    p = torch.nn.Parameter(w.detach().clone())
    opt = torch.optim.SGD([p], lr=lr, momentum=0.9)
    for _ in range(steps):
        opt.zero_grad()
        spreadout_loss(p, margin).backward()
        opt.step()
    return p.detach()


@METHODS.register("fedaws")
class FedAwS(Method):
    defaults = {"margin": 0.8, "steps": 30, "lr": 0.1}
    int_options = frozenset({"steps"})
    capturable = True  # local training is plain FedAvg

    @classmethod
    def check_options(cls, opts, cfg):
        if not 0 < opts["margin"] <= 1 or opts["steps"] < 0 or not opts["lr"] > 0:
            raise CollapseLabError("fedaws needs 0 < margin <= 1 (a cosine distance), steps >= 0 and lr > 0")
        if cfg.method_options.get("etf_scale"):
            raise CollapseLabError("fedaws moves the classifier, which etf_scale fixes; use one of them")
        return opts

    def aggregate(self, r, global_state, results):
        avg = fedavg_of(results)
        w = avg["classifier.weight"]
        avg["classifier.weight"] = spread_out(w, self.opts["margin"], self.opts["steps"], self.opts["lr"]).to(w.dtype)
        return avg
