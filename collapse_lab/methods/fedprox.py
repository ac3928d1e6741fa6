"""FedProx (Li et al. 2020): local loss + mu/2 ||w - w_global||^2 against the round's frozen
global weights (paper mu = 1e-3, FedDecorr App. F). The released FedDecorr code compares
the model with itself, so its term is always zero; here the global weights are a frozen
copy taken at the start of the client's local training."""
from __future__ import annotations

import torch

from ..errors import CollapseLabError
from .hooks import LocalHooks
from . import METHODS, Method, fedavg_of, trainable_names


def proximal_term(model: torch.nn.Module, anchor: dict[str, torch.Tensor], mu: float) -> torch.Tensor:
    """mu/2 * sum over trainable parameters of ||w - w_anchor||^2."""
    total = None
    for name, p in model.named_parameters():
        if name in anchor:
            t = (p - anchor[name]).pow(2).sum()
            total = t if total is None else total + t
    return 0.5 * mu * total


class ProxHooks(LocalHooks):
    def __init__(self, anchor, mu):
        self.anchor, self.mu = anchor, mu

    def loss(self, model, x, y, logits, z):
        return proximal_term(model, self.anchor, self.mu)


@METHODS.register("fedprox")
class FedProx(Method):
    defaults = {"mu": 1e-3}

    @classmethod
    def check_options(cls, opts, cfg):
        if opts["mu"] < 0:
            raise CollapseLabError("fedprox mu must be >= 0")
        return opts

    def __init__(self, cfg, model, num_clients):
        super().__init__(cfg, model, num_clients)
        self.keys = trainable_names(model)
        self._anchor = (None, None)  # (round, the round's global parameters on the device)

    def client_start(self, k, r, model, global_state):
        model.load_state_dict(global_state)
        if self._anchor[0] != r:
            device = next(model.parameters()).device
            self._anchor = (r, {n: global_state[n].detach().to(device) for n in self.keys})
        return ProxHooks(self._anchor[1], self.opts["mu"])

    def aggregate(self, r, global_state, results):
        return fedavg_of(results)
