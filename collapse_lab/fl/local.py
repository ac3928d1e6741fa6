"""Local training of one client: SGD epochs over its own index set (Eq. 9: CE + beta * R(z))."""
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
    extra_loss: Callable | None = None,
    on_step: Callable[[], None] | None = None,
) -> list[dict]:
    """Train ``model`` in place; returns one record per epoch with the mean loss split
    into cross-entropy and regularizer (sample-weighted over batches)."""
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum, weight_decay=weight_decay)
    model.train()
    history = []
    for epoch in range(epochs):
        sums = {"ce": 0.0, "reg": 0.0, "extra": 0.0, "n": 0}
        for idx in batches(len(y), batch_size, generator):
            idx = idx.to(x.device)
            xb, yb = to_float(x[idx]), y[idx]
            logits, z = model(xb)
            ce = F.cross_entropy(logits, yb)
            loss = ce
            r = reg(z, logits) if reg is not None else None
            if r is not None:
                loss = loss + beta * r
            e = extra_loss(model, xb, yb, logits, z) if extra_loss is not None else None
            if e is not None:
                loss = loss + e
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            b = len(yb)
            sums["ce"] += ce.item() * b
            sums["reg"] += (r.item() if r is not None else 0.0) * b
            sums["extra"] += (e.item() if e is not None else 0.0) * b
            sums["n"] += b
            if on_step is not None:
                on_step()
        n = max(sums["n"], 1)
        ce_m, reg_m, ex_m = sums["ce"] / n, sums["reg"] / n, sums["extra"] / n
        history.append({"epoch": epoch + 1, "ce": ce_m, "reg": reg_m,
                        "loss": ce_m + beta * reg_m + ex_m, "samples": sums["n"]})
    return history
