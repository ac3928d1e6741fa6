"""FedETF's two parts as add-ons to any method (Li et al. 2023, "Neural Collapse Inspired
Federated Learning with Non-iid Data"; Table 2 puts the ETF classifier on FedProx,
SCAFFOLD, FedNova, FedOpt and MOON, Tables 3/4 separate ETF from the memory vectors).

Fixed classifier (Sec. 4.1, Eq. 3): W* = sqrt(C/(C-1)) P (I_C - (1/C) 1 1^T), P (d x C)
with orthonormal columns (P^T P = I, so d >= C is needed), drawn once per run from its
seed. With method option ``etf_scale`` > 0 the classifier's weight is ``etf_scale`` * W*^T
(the paper's "ETF" setting is 1.0), its bias is zero, and both are frozen: only the
backbone trains (so SCAFFOLD's control variates, FedOpt's server moments, ... cover the
backbone alone).

Global memory vectors (Sec. 4.2, Alg. 1), on when option ``gmv_weight`` is given: each
round the server sets mu_j to the mean over participating clients of each client's mean
representation of class j (computed on the representations of its last local epoch);
clients that hold no sample of class j do not enter mu_j, and a class no participant held
keeps its previous vector. From round ``gmv_warmup`` on, local training classifies
h = f + gmv_weight * mu_y instead of f (Alg. 1 uses mu^{t-1}, the previous round's
vectors), with whatever classifier the run has (the ETF, or a trained one: "GMV without
ETF"). Paper advice: warm-up at half the rounds or later (500 of 1000), weight in [0.5, 1];
default warm-up: half the rounds. Testing uses f alone (labels are unknown there).

``WithGMV`` wraps any method: its hooks are composed with the method's own (the method's
logits hook runs first, then the memory vectors replace the logits once active), its
state is the method's plus ``gmv``/``gmv_seen``.
"""
from __future__ import annotations


import torch
import torch.nn as nn

from ..errors import CollapseLabError
from ..linalg import simplex_etf
from ..seeds import PURPOSE_ETF, seed_for
from .hooks import LocalHooks

ADDON_DEFAULTS = {"etf_scale": 0.0, "gmv_weight": 0.0, "gmv_warmup": None}
ADDON_INTS = frozenset({"gmv_warmup"})


def etf_scale(cfg, defaults: dict) -> float:
    """The run's ETF scale, 0 when the classifier trains (``defaults``: the method's)."""
    return float(cfg.method_options.get("etf_scale", defaults.get("etf_scale", 0.0)) or 0.0)


def uses_gmv(cfg, defaults: dict) -> bool:
    return "gmv_weight" in cfg.method_options or "gmv_weight" in defaults


def check_addons(opts: dict, cfg) -> dict:
    """Checks the add-on options of any method and derives the memory vectors' warm-up."""
    if "etf_scale" in opts and not opts["etf_scale"] > 0:
        raise CollapseLabError(f"method option etf_scale must be > 0 (got {opts['etf_scale']}); "
                               "leave it out for a trained classifier")
    if "gmv_warmup" in opts and "gmv_weight" not in opts:
        raise CollapseLabError("method option gmv_warmup needs gmv_weight (the memory vectors' weight)")
    if "gmv_weight" in opts:
        if opts["gmv_weight"] < 0:
            raise CollapseLabError(f"method option gmv_weight must be >= 0 (got {opts['gmv_weight']})")
        if opts.get("gmv_warmup") is None:
            opts["gmv_warmup"] = -(-cfg.rounds // 2)
        if opts["gmv_warmup"] < 1:
            raise CollapseLabError("--gmv-warmup must be >= 1 (the first round that uses the memory vectors)")
    return opts


def fix_etf_classifier(model: nn.Module, seed: int, scale: float) -> None:
    """The classifier becomes scale * W*^T with zero bias, frozen (Sec. 4.1)."""
    cl = model.classifier
    gen = torch.Generator().manual_seed(seed_for(seed, PURPOSE_ETF))
    w = simplex_etf(model.feature_dim, cl.out_features, gen) * float(scale)
    with torch.no_grad():
        cl.weight.copy_(w.T.to(cl.weight.dtype))
        if cl.bias is not None:
            cl.bias.zero_()
    cl.requires_grad_(False)


class ClassMeans:
    """Per-class sums and counts of the representations of one local epoch (float64)."""

    def __init__(self, num_classes: int, dim: int, epoch: int, device):
        self.epoch = epoch
        self.sums = torch.zeros(num_classes, dim, dtype=torch.float64, device=device)
        self.counts = torch.zeros(num_classes, dtype=torch.float64, device=device)

    def add(self, epoch: int, z: torch.Tensor, y: torch.Tensor) -> None:
        if epoch == self.epoch:
            self.sums.index_add_(0, y, z.to(torch.float64))
            self.counts.index_add_(0, y, torch.ones_like(y, dtype=torch.float64))

    def means(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(C x d means, zero where a class was absent; C bool: present), on the CPU."""
        has = self.counts > 0
        m = torch.where(has[:, None], self.sums / self.counts.clamp_min(1)[:, None], torch.zeros_like(self.sums))
        return m.cpu(), has.cpu()


class GMVHooks(LocalHooks):
    """The memory vectors around a method's own hooks."""

    def __init__(self, inner: LocalHooks, mu: torch.Tensor | None, weight: float, means: ClassMeans):
        self.inner, self.mu, self.weight, self.class_means = inner, mu, weight, means

    def logits(self, model, z, y, logits):
        logits = self.inner.logits(model, z, y, logits)
        if self.mu is None:
            return logits
        return model.classifier(z + self.weight * self.mu[y].to(z.dtype))

    def loss(self, model, x, y, logits, z):
        return self.inner.loss(model, x, y, logits, z)

    def before_step(self, model):
        self.inner.before_step(model)

    def on_batch(self, epoch, z, y):
        self.inner.on_batch(epoch, z, y)
        self.class_means.add(epoch, z, y)


class WithGMV:
    """A method with the global memory vectors (Alg. 1); everything else is the method's."""

    def __init__(self, inner, cfg, model: nn.Module):
        self.inner, self.cfg = inner, cfg
        self.opts = dict(cfg.method_options)
        self.num_classes = model.classifier.out_features
        self.dim = model.feature_dim
        self.mu = torch.zeros(self.num_classes, self.dim, dtype=torch.float64)
        self.seen = torch.zeros(self.num_classes, dtype=torch.bool)
        self._means: list[tuple[torch.Tensor, torch.Tensor]] = []

    def __getattr__(self, name):  # options, notes, ... of the wrapped method
        return getattr(self.inner, name)

    def bind_clients(self, label_counts):
        self.inner.bind_clients(label_counts)

    def client_start(self, k, r, model, global_state):
        inner = self.inner.client_start(k, r, model, global_state)
        device = next(model.parameters()).device
        use = r >= self.opts["gmv_warmup"] and self.opts["gmv_weight"] > 0 and bool(self.seen.any())
        return GMVHooks(inner, self.mu.to(device) if use else None, self.opts["gmv_weight"],
                        ClassMeans(self.num_classes, self.dim, self.cfg.local_epochs - 1, device))

    def client_end(self, k, r, hooks, result):
        self.inner.client_end(k, r, hooks.inner, result)
        self._means.append(hooks.class_means.means())

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
        return self.inner.aggregate(r, global_state, results)

    def evaluate(self, model, global_state, data):
        return self.inner.evaluate(model, global_state, data)

    def server_state(self):
        return {**self.inner.server_state(), "gmv": self.mu, "gmv_seen": self.seen.to(torch.uint8)}

    def client_state(self):
        return self.inner.client_state()

    def load_state(self, server, clients):
        self.mu = server["gmv"].to(torch.float64)
        self.seen = server["gmv_seen"].bool()
        self.inner.load_state({k: v for k, v in server.items() if k not in ("gmv", "gmv_seen")}, clients)
