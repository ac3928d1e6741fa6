"""The points where a method enters a client's local training (``training.local`` calls them)."""
from __future__ import annotations

import torch
import torch.nn as nn


class LocalHooks:
    """The points where a method enters a client's local training; every hook is optional."""

    def logits(self, model: nn.Module, z: torch.Tensor, y: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
        """The logits the cross-entropy sees (default: the model's own)."""
        return logits

    def loss(self, model: nn.Module, x: torch.Tensor, y: torch.Tensor, logits: torch.Tensor,
             z: torch.Tensor) -> torch.Tensor | None:
        """An extra loss term added to CE + beta * R (already weighted by the method)."""
        return None

    def before_step(self, model: nn.Module) -> None:
        """Called after backward, before the optimizer step (gradient corrections)."""

    def on_batch(self, epoch: int, z: torch.Tensor, y: torch.Tensor) -> None:
        """Sees every batch's representations (detached), e.g. to average them per class."""


NO_HOOKS = LocalHooks()
