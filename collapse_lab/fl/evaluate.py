"""Test accuracy and loss of a model."""
from __future__ import annotations

from typing import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F


@torch.inference_mode()
def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor, to_float: Callable, batch_size: int = 1024) -> dict:
    model.eval()
    correct, loss_sum = 0, 0.0
    for s in range(0, len(y), batch_size):
        xb, yb = to_float(x[s : s + batch_size]), y[s : s + batch_size]
        logits, _ = model(xb)
        loss_sum += F.cross_entropy(logits.float(), yb, reduction="sum").item()
        correct += (logits.argmax(1) == yb).sum().item()
    n = max(len(y), 1)
    return {"test_acc": correct / n, "test_loss": loss_sum / n}
