"""MOON (Li et al. 2021b), model-contrastive federated learning.

A projection head g (Linear d->d, ReLU, Linear d->out_dim; MOON's out_dim = 256) maps the
representation z to p = g(z). With p_glob from the round's frozen global model and p_prev
from the client's own previous local model (both frozen, eval mode),

    l_con = -log( exp(cos(p, p_glob)/tau) / (exp(cos(p, p_glob)/tau) + exp(cos(p, p_prev)/tau)) )

averaged over the batch, and the local loss is CE + beta R(z) + mu * l_con. Paper values:
mu = 1 (FedDecorr App. F), tau = 0.5 (MOON). The released FedDecorr code parses tau and
never uses it; here it divides the similarities as in MOON's Eq. 3.

The head sits beside the classifier (the classifier still reads z, the representation
every analysis studies) and is averaged with the rest of the model. A client's previous
model starts as the initial global model and persists across rounds (client state).
"""
from __future__ import annotations

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..errors import CollapseLabError
from .hooks import LocalHooks
from . import METHODS, Method, fedavg_of, join_client_state, split_client_state


def moon_loss(p: torch.Tensor, p_glob: torch.Tensor, p_prev: torch.Tensor, tau: float) -> torch.Tensor:
    """MOON's Eq. 3, mean over the batch."""
    pos = F.cosine_similarity(p, p_glob, dim=1)
    neg = F.cosine_similarity(p, p_prev, dim=1)
    logits = torch.stack([pos, neg], dim=1) / tau
    return F.cross_entropy(logits, torch.zeros(len(p), dtype=torch.long, device=p.device))


class MoonHooks(LocalHooks):
    def __init__(self, glob: nn.Module, prev: nn.Module, mu: float, tau: float):
        self.glob, self.prev, self.mu, self.tau = glob, prev, mu, tau

    def loss(self, model, x, y, logits, z):
        p = model.moon_head(z)
        with torch.no_grad():
            pg = self.glob.moon_head(self.glob(x)[1])
            pp = self.prev.moon_head(self.prev(x)[1])
        return self.mu * moon_loss(p, pg, pp, self.tau)


@METHODS.register("moon")
class Moon(Method):
    client_copies = 1.0  # previous local models
    defaults = {"mu": 1.0, "tau": 0.5, "out_dim": 256}
    int_options = frozenset({"out_dim"})

    @classmethod
    def check_options(cls, opts, cfg):
        if opts["mu"] < 0 or not opts["tau"] > 0 or opts["out_dim"] < 1:
            raise CollapseLabError("moon needs mu >= 0, tau > 0 and out_dim >= 1")
        return opts

    @classmethod
    def prepare_model(cls, model, cfg, num_classes):
        d, out = model.feature_dim, int(cfg.method_options.get("out_dim", 256))
        model.moon_head = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, out))

    def __init__(self, cfg, model, num_clients):
        super().__init__(cfg, model, num_clients)
        self.init_state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
        self.glob = copy.deepcopy(model).eval().requires_grad_(False)
        self.prev: dict[int, dict[str, torch.Tensor]] = {}
        self._glob_round = None

    def client_start(self, k, r, model, global_state):
        model.load_state_dict(global_state)
        if self._glob_round != r:  # the round's global model is the same for every client
            self.glob.load_state_dict(global_state)
            self._glob_round = r
        # each client its own copy: clients may train side by side
        prev = copy.deepcopy(self.glob)
        prev.load_state_dict(self.prev.get(k, self.init_state))
        return MoonHooks(self.glob, prev, self.opts["mu"], self.opts["tau"])

    def client_end(self, k, r, hooks, result):
        self.prev[k] = result.state

    def aggregate(self, r, global_state, results):
        return fedavg_of(results)

    def client_state(self):
        return join_client_state(self.prev)

    def load_state(self, server, clients):
        self.prev = split_client_state(clients)
