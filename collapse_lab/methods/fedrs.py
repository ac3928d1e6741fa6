"""FedRS (Li & Zhan 2021, "FedRS: Federated Learning with Restricted Softmax for Label
Distribution Non-IID Data", Sec. 4): during local training the logit of every class the
client holds no sample of is scaled by alpha in [0, 1],

    o_c = s_c w_c^T z + b_c,   s_c = 1 if client k has class c, alpha otherwise,

so the classifier weights of missing classes are not pushed away from the client's
features as hard (alpha = 1 is FedAvg's local loss). ``proportional=1`` is the released
code's variant, s_c = alpha + (1 - alpha) n_{k,c} / max_c' n_{k,c'}; both agree when a
client holds its classes in equal numbers (FedRS's scenes). The bias, where the model has
one, is not scaled (the paper's classifier has none). Evaluation uses the plain logits.
Aggregation is FedAvg. Default alpha 0.5 (the middle of the released code's grid
{0.9, 0.5, 0.1}; FedETF does not state its value).
"""
from __future__ import annotations

import torch

from ..errors import CollapseLabError
from .hooks import LocalHooks
from . import METHODS, Method, fedavg_of


def restricted_scale(counts: torch.Tensor, alpha: float, proportional: bool = False) -> torch.Tensor:
    """s_c per class from a client's class counts."""
    if proportional:
        return alpha + (1 - alpha) * counts / counts.max().clamp_min(1)
    return torch.where(counts > 0, torch.ones_like(counts), torch.full_like(counts, alpha))


def restricted_logits(model: torch.nn.Module, logits: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    b = model.classifier.bias
    if b is None:
        return logits * scale
    return (logits - b) * scale + b


class RestrictedHooks(LocalHooks):
    def __init__(self, scale: torch.Tensor):
        self.scale = scale

    def logits(self, model, z, y, logits):
        return restricted_logits(model, logits, self.scale.to(logits.dtype))


@METHODS.register("fedrs")
class FedRS(Method):
    defaults = {"alpha": 0.5, "proportional": 0}
    int_options = frozenset({"proportional"})

    @classmethod
    def check_options(cls, opts, cfg):
        if not 0 <= opts["alpha"] <= 1:
            raise CollapseLabError(f"fedrs alpha must be in [0, 1] (got {opts['alpha']})")
        if opts["proportional"] not in (0, 1):
            raise CollapseLabError("fedrs proportional must be 0 (the paper's scaling) or 1 (the released code's)")
        return opts

    def __init__(self, cfg, model, num_clients):
        super().__init__(cfg, model, num_clients)
        self.counts = None

    def bind_clients(self, label_counts):
        self.counts = label_counts

    def client_start(self, k, r, model, global_state):
        model.load_state_dict(global_state)
        device = next(model.parameters()).device
        s = restricted_scale(self.counts[k], self.opts["alpha"], bool(self.opts["proportional"]))
        return RestrictedHooks(s.to(device=device, dtype=torch.float32))

    def aggregate(self, r, global_state, results):
        return fedavg_of(results)
