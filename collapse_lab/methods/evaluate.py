"""Test accuracy and loss of a model."""
from __future__ import annotations

from typing import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F


MAX_DOMAINS = 100


@torch.inference_mode()
def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor, to_float: Callable, batch_size: int = 1024,
             domains: torch.Tensor | None = None) -> dict:
    """Accuracy and mean cross-entropy on (x, y); with ``domains`` (every test sample's
    domain index) also ``domain_test_acc``, the accuracy on each domain's samples (None for
    a domain without test samples): the journal's per-domain columns (Table 3). Not for
    more than ``MAX_DOMAINS`` groups (FEMNIST's 3,550 writers would swell every round's record)."""
    model.eval()
    correct, loss_sum = 0, 0.0
    hits = []
    for s in range(0, len(y), batch_size):
        xb, yb = to_float(x[s : s + batch_size]), y[s : s + batch_size]
        logits, _ = model(xb)
        loss_sum += F.cross_entropy(logits.float(), yb, reduction="sum").item()
        hit = logits.argmax(1) == yb
        correct += hit.sum().item()
        if domains is not None:
            hits.append(hit)
    n = max(len(y), 1)
    out = {"test_acc": correct / n, "test_loss": loss_sum / n}
    if domains is not None and len(y) and int(domains.max()) < MAX_DOMAINS:
        hit, d = torch.cat(hits).double(), domains.to(hits[0].device)
        per = torch.zeros(int(d.max()) + 1, dtype=torch.float64, device=d.device).index_add_(0, d, hit)
        cnt = torch.bincount(d, minlength=len(per)).double()
        out["domain_test_acc"] = [None if c == 0 else a / c for a, c in zip(per.tolist(), cnt.tolist())]
    return out
