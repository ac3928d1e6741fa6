"""FedBN (Li et al. 2021): BatchNorm layers stay local.

Every BatchNorm weight, bias and running statistic of client k is its own: a client
starts each round from the global model with its own BatchNorm entries put back (the
global ones the first time), and the server averages only the other entries.
Evaluation is personalised, as FedBN reports it: client k's model (global weights + its
BatchNorm) is tested on the test samples of the domains in its training data (on the
whole test set when the data set has no domains); ``test_acc`` is the mean over clients.

The stored global checkpoint holds the sample-weighted average of the clients'
BatchNorm entries, a model no client uses but one the spectrum analyses can read.
"""
from __future__ import annotations

import torch
import torch.nn as nn

from .evaluate import evaluate
from . import METHODS, Method, fedavg_of, join_client_state, split_client_state


def batchnorm_keys(model: nn.Module) -> list[str]:
    keys = []
    for name, m in model.named_modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            keys += [f"{name}.{k}" for k in m.state_dict()]
    return keys


@METHODS.register("fedbn")
class FedBN(Method):
    capturable = True
    @classmethod
    def notes(cls, model, cfg):
        if not batchnorm_keys(model):
            return [f"fedbn: model {cfg.model} has no BatchNorm layer, so fedbn trains exactly as fedavg "
                    "(use resnet18/20/32 or mobilenetv2)"]
        return []

    def __init__(self, cfg, model, num_clients):
        super().__init__(cfg, model, num_clients)
        self.keys = batchnorm_keys(model)
        self.local: dict[int, dict[str, torch.Tensor]] = {}

    def personal_state(self, k: int, global_state: dict) -> dict:
        return {**global_state, **self.local.get(k, {})}

    def client_start(self, k, r, model, global_state):
        return super().client_start(k, r, model, self.personal_state(k, global_state))

    def client_end(self, k, r, hooks, result):
        if self.keys:
            self.local[k] = {n: result.state[n] for n in self.keys}

    def aggregate(self, r, global_state, results):
        return fedavg_of(results)

    def evaluate(self, model, global_state, data):
        if not self.keys:  # no BatchNorm: FedBN is FedAvg
            return super().evaluate(model, global_state, data)
        accs, losses = [], []
        n_dom = None if data.test_domain is None else int(data.test_domain.max()) + 1
        dom_acc = None if n_dom is None else [None] * n_dom
        for k in range(self.num_clients):
            x, y = data.x, data.y
            if data.test_domain is not None and data.client_domains is not None:
                mask = torch.isin(data.test_domain.to(x.device), torch.as_tensor(data.client_domains[k], device=x.device))
                x, y = x[mask], y[mask]
            if len(y) == 0:
                continue
            model.load_state_dict(self.personal_state(k, global_state))
            ev = evaluate(model, x, y, data.to_float, data.batch_size)
            accs.append(ev["test_acc"])
            losses.append(ev["test_loss"])
            if dom_acc is not None and data.client_domains is not None and len(data.client_domains[k]) == 1:
                dom_acc[data.client_domains[k][0]] = ev["test_acc"]  # the client of that domain, own BatchNorm
        out = {"test_acc": sum(accs) / len(accs), "test_loss": sum(losses) / len(losses),
               "client_test_acc": accs, "evaluation": "personalised (own BatchNorm per client)"}
        return out if dom_acc is None else {**out, "domain_test_acc": dom_acc}

    def client_state(self):
        return join_client_state(self.local)

    def load_state(self, server, clients):
        self.local = split_client_state(clients)
