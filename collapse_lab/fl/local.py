"""Local training of one client: SGD epochs over its own index set (Eq. 9: CE + beta * R(z)).

Methods change local training only through ``LocalHooks`` (FedProx/MOON add a loss term,
SCAFFOLD corrects the gradient, FedETF's memory vectors change the logits), so every
method composes with every regularizer.
"""
from __future__ import annotations

from typing import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F


def num_batches(n: int, batch_size: int) -> int:
    """Batches per epoch under the rule of ``batches`` (a 1-sample tail is dropped when n > 1)."""
    nb = -(-n // batch_size)
    return nb - 1 if nb > 1 and n % batch_size == 1 else nb


def batches(n: int, batch_size: int, generator: torch.Generator) -> list[torch.Tensor]:
    """A fresh random order each epoch, cut into batches. A trailing batch of a single
    sample is dropped (when n > 1): BatchNorm cannot normalise one sample and a
    one-sample correlation matrix carries no information."""
    order = torch.randperm(n, generator=generator)
    out = list(order.split(batch_size))
    if len(out) > 1 and len(out[-1]) == 1:
        out.pop()
    return out


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


def train_client(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    to_float: Callable[[torch.Tensor], torch.Tensor],
    *,
    epochs: int,
    batch_size: int,
    lr: float,
    momentum: float,
    weight_decay: float,
    reg: Callable | None,
    beta: float,
    generator: torch.Generator,
    hooks: LocalHooks = NO_HOOKS,
    on_step: Callable[[], None] | None = None,
) -> list[dict]:
    """Train ``model`` in place; returns one record per epoch with the mean loss split
    into cross-entropy, regularizer and the method's extra term (sample-weighted over
    batches) and the number of optimizer steps taken. Frozen parameters
    (``requires_grad=False``, e.g. FedETF's classifier) are left out of the optimizer."""
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.SGD(params, lr=lr, momentum=momentum, weight_decay=weight_decay)
    model.train()
    history = []
    for epoch in range(epochs):
        sums = {"ce": 0.0, "reg": 0.0, "extra": 0.0, "n": 0, "steps": 0}
        for idx in batches(len(y), batch_size, generator):
            idx = idx.to(x.device)
            xb, yb = to_float(x[idx]), y[idx]
            logits, z = model(xb)
            hooks.on_batch(epoch, z.detach(), yb)
            ce = F.cross_entropy(hooks.logits(model, z, yb, logits), yb)
            loss = ce
            r = reg(z, logits) if reg is not None else None
            if r is not None:
                loss = loss + beta * r
            e = hooks.loss(model, xb, yb, logits, z)
            if e is not None:
                loss = loss + e
            opt.zero_grad(set_to_none=True)
            loss.backward()
            hooks.before_step(model)
            opt.step()
            sums["steps"] += 1
            b = len(yb)
            sums["ce"] += ce.item() * b
            sums["reg"] += (r.item() if r is not None else 0.0) * b
            sums["extra"] += (e.item() if e is not None else 0.0) * b
            sums["n"] += b
            if on_step is not None:
                on_step()
        n = max(sums["n"], 1)
        ce_m, reg_m, ex_m = sums["ce"] / n, sums["reg"] / n, sums["extra"] / n
        history.append({"epoch": epoch + 1, "ce": ce_m, "reg": reg_m, "extra": ex_m,
                        "loss": ce_m + beta * reg_m + ex_m, "samples": sums["n"], "steps": sums["steps"]})
    return history
