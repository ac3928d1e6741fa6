"""FedProto (Tan et al. 2022, "FedProto: Federated Prototype Learning across Heterogeneous
Clients", Eqs. 4-6).

Each client's prototype of class j is the mean representation of its samples of class j
(here over its last local epoch, as the memory vectors of ``addons``); the server's global
prototype is their mean weighted by the clients' sample counts of j (Eq. 6), over the
participants that hold j; a class no participant held keeps its previous prototype.
Local training adds

    lam * mean_{i, d} (z_id - P_{y_i, d})^2

(the released code's ``nn.MSELoss`` between z and the global prototype of its label;
samples whose class has no global prototype yet do not enter), so the term is zero in the
first round. Default lam = 1 (the released code's ``ld``).

FedProto as published keeps every client's model personal and exchanges only the
prototypes. The comparisons that use it here (FedUV Table 4) report one test accuracy of
a global model, so the backbone is averaged as in FedAvg; ``--method fedproto`` is
"FedAvg + the prototype regularizer". Evaluation is the global model's classifier.
"""
from __future__ import annotations

import torch

from .hooks import LocalHooks
from . import METHODS, Method, fedavg_of
from .addons import ClassMeans


def prototype_loss(z: torch.Tensor, y: torch.Tensor, protos: torch.Tensor, known: torch.Tensor) -> torch.Tensor:
    """Mean squared distance between z and its class's prototype, over the samples whose
    class has one (zero when none has)."""
    keep = known[y]
    if not bool(keep.any()):
        return z.sum() * 0.0
    return (z[keep] - protos[y[keep]].to(z.dtype)).pow(2).mean()


class ProtoHooks(LocalHooks):
    def __init__(self, protos, known, lam, means: ClassMeans):
        self.protos, self.known, self.lam, self.class_means = protos, known, lam, means

    def loss(self, model, x, y, logits, z):
        return self.lam * prototype_loss(z, y, self.protos, self.known)

    def on_batch(self, epoch, z, y):
        self.class_means.add(epoch, z, y)


@METHODS.register("fedproto")
class FedProto(Method):
    defaults = {"lam": 1.0}
    bounds = {"lam": ">= 0"}


    def __init__(self, cfg, model, num_clients):
        super().__init__(cfg, model, num_clients)
        self.num_classes, self.dim = model.classifier.out_features, model.feature_dim
        self.protos = torch.zeros(self.num_classes, self.dim, dtype=torch.float64)
        self.known = torch.zeros(self.num_classes, dtype=torch.bool)
        self._sums: list[tuple[torch.Tensor, torch.Tensor]] = []

    def client_start(self, k, r, model, global_state):
        model.load_state_dict(global_state)
        device = next(model.parameters()).device
        return ProtoHooks(self.protos.to(device), self.known.to(device), self.opts["lam"],
                          ClassMeans(self.num_classes, self.dim, self.cfg.local_epochs - 1, device))

    def client_end(self, k, r, hooks, result):
        cm = hooks.class_means
        self._sums.append((cm.sums.cpu(), cm.counts.cpu()))

    def aggregate(self, r, global_state, results):
        sums = sum(s for s, _ in self._sums)
        counts = sum(c for _, c in self._sums)
        upd = counts > 0
        self.protos[upd] = sums[upd] / counts[upd, None]
        self.known |= upd
        self._sums = []
        return fedavg_of(results)

    def server_state(self):
        return {"protos": self.protos, "protos_known": self.known.to(torch.uint8)}

    def load_state(self, server, clients):
        self.protos = server["protos"].to(torch.float64)
        self.known = server["protos_known"].bool()
