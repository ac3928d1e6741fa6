"""FedDyn (Acar et al. 2021, "Federated Learning Based on Dynamic Regularization", Alg. 1).

Client k in round t minimises (Eq. in Alg. 1)

    L_k(w) - <g_k, w> + (alpha/2) ||w - w^{t-1}||^2,

g_k = grad L_k(w_k^{t-1}), the client's gradient state (zero before its first round), so
the local gradient is grad L_k(w) - g_k + alpha (w - w^{t-1}). The term enters as the
method's loss (``extra`` in the epoch records), beside CE + beta R. After training:

    g_k <- g_k - alpha (w_k^t - w^{t-1})                          (first-order condition)

Server, with P_t the participants and m all clients:

    h   <- h - alpha (1/m) sum_{k in P_t} (w_k^t - w^{t-1})
    w^t  = (1/|P_t|) sum_{k in P_t} w_k^t - h / alpha

The average over participants is uniform, as in Alg. 1 (the released code does the same);
BatchNorm statistics are averaged uniformly too and take no part in the correction.
Default alpha = 0.01 (the released code's CIFAR value; the paper searches {0.1, 0.01,
0.001}). g_k is kept in the parameters' dtype (float32: K model copies), h in float64.
"""
from __future__ import annotations

import torch

from .aggregate import weighted_average
from .hooks import LocalHooks
from . import METHODS, Method, join_client_state, split_client_state, trainable_names


def feddyn_term(model: torch.nn.Module, grad_state: dict[str, torch.Tensor], anchor: dict[str, torch.Tensor],
                alpha: float) -> torch.Tensor:
    """-<g_k, w> + alpha/2 ||w - w_anchor||^2 over the trainable parameters."""
    lin, quad = None, None
    for name, p in model.named_parameters():
        if name in anchor:
            a = -(p * grad_state[name]).sum()
            b = (p - anchor[name]).pow(2).sum()
            lin, quad = (a, b) if lin is None else (lin + a, quad + b)
    return lin + 0.5 * alpha * quad


class DynHooks(LocalHooks):
    def __init__(self, grad_state, anchor, alpha):
        self.grad_state, self.anchor, self.alpha = grad_state, anchor, alpha

    def loss(self, model, x, y, logits, z):
        return feddyn_term(model, self.grad_state, self.anchor, self.alpha)


@METHODS.register("feddyn")
class FedDyn(Method):
    server_copies = 2.0  # float64 h
    client_copies = 1.0  # g_k
    defaults = {"alpha": 0.01}
    bounds = {"alpha": "> 0"}


    def __init__(self, cfg, model, num_clients):
        super().__init__(cfg, model, num_clients)
        params = dict(model.named_parameters())
        self.keys = trainable_names(model)
        self.shapes = {n: (params[n].shape, params[n].dtype) for n in self.keys}
        self.h = {n: torch.zeros(params[n].shape, dtype=torch.float64) for n in self.keys}
        self.grads: dict[int, dict[str, torch.Tensor]] = {}

    def _grad(self, k):
        return self.grads.get(k) or {n: torch.zeros(s, dtype=d) for n, (s, d) in self.shapes.items()}

    def client_start(self, k, r, model, global_state):
        model.load_state_dict(global_state)
        device = next(model.parameters()).device
        anchor = {n: global_state[n].detach().to(device) for n in self.keys}
        grad = {n: v.to(device) for n, v in self._grad(k).items()}
        return DynHooks(grad, anchor, self.opts["alpha"])

    def client_end(self, k, r, hooks, result):
        alpha, g = self.opts["alpha"], self._grad(k)
        self.grads[k] = {n: (g[n].to(torch.float64) - alpha * (result.state[n].to(torch.float64)
                                                                - hooks.anchor[n].cpu().to(torch.float64))
                             ).to(g[n].dtype) for n in self.keys}

    def aggregate(self, r, global_state, results):
        alpha = self.opts["alpha"]
        avg = weighted_average([c.state for c in results], [1.0] * len(results))
        for n in self.keys:
            w = global_state[n].to(torch.float64)
            total = sum(c.state[n].to(torch.float64) for c in results)
            self.h[n] = self.h[n] - alpha / self.num_clients * (total - len(results) * w)
            avg[n] = (total / len(results) - self.h[n] / alpha).to(global_state[n].dtype)
        return avg

    def server_state(self):
        return {f"h/{n}": v for n, v in self.h.items()}

    def client_state(self):
        return join_client_state(self.grads)

    def load_state(self, server, clients):
        self.h = {n: server[f"h/{n}"].to(torch.float64) for n in self.keys}
        self.grads = split_client_state(clients)
