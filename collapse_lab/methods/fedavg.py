"""FedAvg (McMahan et al. 2017): sample-count weighted average of all parameters and buffers."""
from __future__ import annotations

from . import METHODS, Method, fedavg_of


@METHODS.register("fedavg")
class FedAvg(Method):
    """FedAvg: the clients' models averaged with weights n_k / n."""

    capturable = True

    def aggregate(self, r, global_state, results):
        return fedavg_of(results)
