"""FedNova (Wang et al. 2020): normalised averaging.

Each client's update is divided by ||a_k||_1, its effective number of local steps, and
the average is rescaled by tau_eff = sum_k p_k ||a_k||_1 (``aggregate.normalized_average``).
For SGD with momentum rho, ||a_k||_1 = sum_{t=1}^{tau_k} (1 - rho^t)/(1 - rho)
(``aggregate.momentum_norm``; the released code accumulates the same sum step by step),
with tau_k the optimizer steps client k took. Equal step counts give FedAvg.
"""
from __future__ import annotations

from .aggregate import momentum_norm, normalized_average
from . import METHODS, Method, trainable_names


@METHODS.register("fednova")
class FedNova(Method):
    capturable = True
    def __init__(self, cfg, model, num_clients):
        super().__init__(cfg, model, num_clients)
        self.keys = trainable_names(model)

    def aggregate(self, r, global_state, results):
        norms = [momentum_norm(c.steps, self.cfg.momentum) for c in results]
        return normalized_average(global_state, [c.state for c in results], [c.samples for c in results], norms,
                                  self.keys)
