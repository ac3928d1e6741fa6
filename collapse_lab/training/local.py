"""The pieces of local training (Eq. 9: CE + beta * R(z)) that ``training.trainer`` assembles:
batching, the step's loss, the epoch record, the hooks through which methods enter.

Methods change local training only through ``LocalHooks`` (FedProx/MOON add a loss term,
SCAFFOLD corrects the gradient, FedETF's memory vectors change the logits), so every
method composes with every regularizer.
"""
from __future__ import annotations

from typing import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..devices import to_device
from ..methods.hooks import NO_HOOKS, LocalHooks
from .fastpath import PLAIN, FastPath  # noqa: F401 -- PLAIN re-exported


def num_batches(n: int, batch_size: int) -> int:
    """Batches per epoch under the rule of ``batches`` (a batch of one sample is dropped,
    unless every batch is one sample: ``batch_size`` 1)."""
    nb = -(-n // batch_size)
    return nb - 1 if batch_size > 1 and n % batch_size == 1 else nb


def batch_sizes(n: int, batch_size: int) -> set[int]:
    """The distinct batch sizes ``batches`` gives for n samples (a step program per size)."""
    sizes = {batch_size} if n >= batch_size else set()
    tail = n % batch_size
    if tail > 1:
        sizes.add(tail)
    return sizes


def batches(n: int, batch_size: int, generator: torch.Generator) -> list[torch.Tensor]:
    """A fresh random order each epoch, cut into batches. A batch of a single sample is
    dropped (unless ``batch_size`` is 1): BatchNorm cannot normalise one sample and a one-sample correlation matrix
    carries no information. So a client with no sample or one (a split with ``--min-size``
    below 2, as a smoke run's) has no batch: it takes no step and keeps the global model."""
    order = torch.randperm(n, generator=generator)
    out = [b for b in order.split(batch_size) if len(b)]  # split of an empty order gives one empty batch
    if batch_size > 1 and out and len(out[-1]) == 1:
        out.pop()
    return out






def epoch_raw(x: torch.Tensor, y: torch.Tensor, idx_batches: list[torch.Tensor], fast: FastPath,
              aug_generator: torch.Generator | None):
    """Yield (stored-dtype input, labels) per batch. The epoch's order goes to the device in
    one non-blocking copy (a copy per batch from pageable memory would make the host wait
    for the GPU at every step); samples are gathered a chunk of whole batches (about
    ``fast.chunk`` images) at a time and, with augmentation, augmented per chunk, so kernel
    launches are paid per chunk, not per image or batch. ``aug_generator`` draws the
    augmentation (its own stream: the batch order is the same with and without it)."""
    dev = x.device
    if not idx_batches:
        return
    gen = aug_generator
    order = to_device(torch.cat(idx_batches), dev)
    i = start = 0
    while i < len(idx_batches):
        group, n = [], 0
        while i < len(idx_batches) and (not group or n + len(idx_batches[i]) <= fast.chunk):
            group.append(len(idx_batches[i]))
            n += group[-1]
            i += 1
        idx = order[start : start + n]
        start += n
        xa = fast.augment(x[idx], gen) if fast.augment else x[idx]
        s = 0
        for b in group:
            yield xa[s : s + b], y[idx[s : s + b]]
            s += b


def model_input(xb: torch.Tensor, fast: FastPath) -> torch.Tensor:
    """The float batch in the training memory format."""
    return xb.contiguous(memory_format=torch.channels_last) if fast.channels_last and xb.dim() == 4 else xb


def at_least_fp32(t: torch.Tensor) -> torch.Tensor:
    """fp16/bf16 -> fp32; fp32 and fp64 unchanged (the tests train in fp64 as an oracle)."""
    return t.float() if t.dtype in (torch.float16, torch.bfloat16) else t


def step_loss(model: nn.Module, forward: Callable, xb: torch.Tensor, yb: torch.Tensor, *, fast: FastPath,
              reg: Callable | None, beta: float, hooks: LocalHooks = NO_HOOKS, epoch: int = 0, cache: bool = True):
    """Eq. 9 for one batch, loss = CE + beta * R(z) (+ the method's term); returns (loss,
    ce, r, e), r and e None when absent. The forward runs under ``fast.autocast``;
    ``cache`` is autocast's weight-cast cache (off while a CUDA graph is captured)."""
    # Autocast runs on whatever device the data is on; the engine asks for bf16 on CUDA only
    # (runspec.speed.resolve_precision), and the tests run this same code on CPU.
    with torch.autocast(xb.device.type, dtype=fast.autocast or torch.bfloat16, enabled=fast.autocast is not None,
                        cache_enabled=cache):
        logits, z = forward(xb)
    # Losses and the regularizer in fp32 whatever the forward's precision: the correlation
    # matrix of z is the quantity under study.
    logits, z = at_least_fp32(logits), at_least_fp32(z)
    hooks.on_batch(epoch, z.detach(), yb)
    ce = F.cross_entropy(hooks.logits(model, z, yb, logits), yb)
    loss = ce
    r = reg(z, logits) if reg is not None else None
    if r is not None:
        loss = loss + beta * r
    e = hooks.loss(model, xb, yb, logits, z)
    if e is not None:
        loss = loss + e
    return loss, ce, r, e


def epoch_record(epoch: int, ce_sum: float, reg_sum: float, extra_sum: float, n_seen: int, steps: int,
                 beta: float) -> dict:
    """One epoch's ``local_epoch`` record: sample-weighted mean losses from their sums."""
    n = max(n_seen, 1)
    ce_m, reg_m, ex_m = ce_sum / n, reg_sum / n, extra_sum / n
    return {"epoch": epoch, "ce": ce_m, "reg": reg_m, "extra": ex_m, "loss": ce_m + beta * reg_m + ex_m,
            "samples": n_seen, "steps": steps}


def cpu_state(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """A copy of a state dict on the CPU, contiguous: a channels_last model's weights are
    stored (and averaged) in the standard layout, so checkpoints do not depend on it."""
    return {k: v.detach().to("cpu", copy=True).contiguous() for k, v in state.items()}
