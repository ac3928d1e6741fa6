"""Server/client algorithms, keyed by the ``--method`` name.

A method sees each round at three points: ``local_loss`` (an extra term in local
training, or None), ``aggregate`` (client states -> new global state) and ``state``
(tensors it carries across rounds, saved with the round's checkpoint).
"""
from __future__ import annotations

import torch

from ..registry import Registry
from .aggregate import weighted_average

METHODS: Registry = Registry("method")


class Method:
    def __init__(self, config):
        self.config = config

    def local_loss(self, client: int, global_state: dict[str, torch.Tensor]):
        return None

    def aggregate(self, global_state, client_states, weights):
        raise NotImplementedError

    def state(self) -> dict[str, torch.Tensor]:
        return {}


@METHODS.register("fedavg")
class FedAvg(Method):
    """FedAvg (McMahan et al. 2017): sample-count weighted average of all parameters and buffers."""

    def aggregate(self, global_state, client_states, weights):
        return weighted_average(client_states, weights)
