"""FedETF (Li et al. 2023, "Neural Collapse Inspired Federated Learning with Non-iid Data").

Fixed classifier (Sec. 4.1, Eq. 3): W* = sqrt(C/(C-1)) P (I_C - (1/C) 1 1^T), P (d x C)
with orthonormal columns (P^T P = I, so d >= C is needed), drawn once per run from its
seed. The classifier's weight is ``etf_scale`` * W*^T (the paper's "ETF" setting, 1.0),
its bias is zero, and both are frozen: only the backbone trains.

Global memory vectors (Sec. 4.2, Alg. 1): each round the server sets mu_j to the mean
over participating clients of each client's mean representation of class j (computed
on the representations of its last local epoch); clients that hold no sample of class j
do not enter mu_j, and a class no participant held keeps its previous vector. From round
``gmv_warmup`` on, local training classifies h = f + gmv_weight * mu_y instead of f
(Alg. 1 uses mu^{t-1}, the previous round's vectors). Paper advice: warm-up at half the
rounds or later (500 of 1000), weight in [0.5, 1]; defaults: half the rounds, 0.5.
Testing uses f alone (labels are unknown there).
"""
from __future__ import annotations

import math

import torch

from ...errors import CollapseLabError
from ..local import LocalHooks
from ...seeds import PURPOSE_ETF, seed_for
from . import METHODS, Method, fedavg_of


def simplex_etf(d: int, c: int, generator: torch.Generator) -> torch.Tensor:
    """Eq. 3: a random simplex ETF, d x C, unit-norm columns with pairwise cosine -1/(C-1)."""
    if d < c:
        raise CollapseLabError(f"fedetf needs a representation at least as wide as the class count (d = {d} < C = {c}); "
                               "use a wider model")
    p, _ = torch.linalg.qr(torch.randn(d, c, generator=generator, dtype=torch.float64))
    centre = torch.eye(c, dtype=torch.float64) - torch.full((c, c), 1.0 / c, dtype=torch.float64)
    return math.sqrt(c / (c - 1)) * p @ centre


class GMVHooks(LocalHooks):
    def __init__(self, mu: torch.Tensor | None, weight: float, last_epoch: int, num_classes: int, dim: int, device):
        self.mu, self.weight, self.last_epoch = mu, weight, last_epoch
        self.sums = torch.zeros(num_classes, dim, dtype=torch.float64, device=device)
        self.counts = torch.zeros(num_classes, dtype=torch.float64, device=device)

    def logits(self, model, z, y, logits):
        if self.mu is None:
            return logits
        return model.classifier(z + self.weight * self.mu[y].to(z.dtype))

    def on_batch(self, epoch, z, y):
        if epoch == self.last_epoch:
            self.sums.index_add_(0, y, z.to(torch.float64))
            self.counts.index_add_(0, y, torch.ones_like(y, dtype=torch.float64))


@METHODS.register("fedetf")
class FedETF(Method):
    defaults = {"etf_scale": 1.0, "gmv_weight": 0.5, "gmv_warmup": None}
    int_options = frozenset({"gmv_warmup"})

    @classmethod
    def check_options(cls, opts, cfg):
        if opts["gmv_warmup"] is None:
            opts["gmv_warmup"] = -(-cfg.rounds // 2)
        if opts["gmv_warmup"] < 1:
            raise CollapseLabError("--gmv-warmup must be >= 1 (the first round that uses the memory vectors)")
        if not opts["etf_scale"] > 0 or opts["gmv_weight"] < 0:
            raise CollapseLabError("fedetf needs etf_scale > 0 and gmv_weight >= 0")
        return opts

    @classmethod
    def prepare_model(cls, model, cfg, num_classes):
        cl = model.classifier
        gen = torch.Generator().manual_seed(seed_for(cfg.seed, PURPOSE_ETF))
        w = simplex_etf(model.feature_dim, num_classes, gen) * float(cfg.method_options.get("etf_scale", 1.0))
        with torch.no_grad():
            cl.weight.copy_(w.T.to(cl.weight.dtype))
            if cl.bias is not None:
                cl.bias.zero_()
        cl.requires_grad_(False)

    def __init__(self, cfg, model, num_clients):
        super().__init__(cfg, model, num_clients)
        self.num_classes = model.classifier.out_features
        self.dim = model.feature_dim
        self.mu = torch.zeros(self.num_classes, self.dim, dtype=torch.float64)
        self.seen = torch.zeros(self.num_classes, dtype=torch.bool)
        self._means: list[tuple[torch.Tensor, torch.Tensor]] = []

    def client_start(self, k, r, model, global_state):
        model.load_state_dict(global_state)
        device = next(model.parameters()).device
        use = r >= self.opts["gmv_warmup"] and self.opts["gmv_weight"] > 0 and bool(self.seen.any())
        return GMVHooks(self.mu.to(device) if use else None, self.opts["gmv_weight"], self.cfg.local_epochs - 1,
                        self.num_classes, self.dim, device)

    def client_end(self, k, r, hooks, result):
        h = hooks
        has = h.counts > 0
        means = torch.where(has[:, None], h.sums / h.counts.clamp_min(1)[:, None], torch.zeros_like(h.sums))
        self._means.append((means.cpu(), has.cpu()))

    def aggregate(self, r, global_state, results):
        total = torch.zeros_like(self.mu)
        n = torch.zeros(self.num_classes, dtype=torch.float64)
        for means, has in self._means:
            total += means
            n += has.to(torch.float64)
        upd = n > 0
        self.mu[upd] = total[upd] / n[upd, None]
        self.seen |= upd
        self._means = []
        return fedavg_of(results)

    def server_state(self):
        return {"gmv": self.mu, "gmv_seen": self.seen.to(torch.uint8)}

    def load_state(self, server, clients):
        self.mu = server["gmv"].to(torch.float64)
        self.seen = server["gmv_seen"].bool()
