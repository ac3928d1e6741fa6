"""Clients of several runs trained as one stacked model (``torch.func``: ``vmap`` of
``grad`` over ``functional_call`` with every member's weights stacked along a new first
dimension): one step of the stack is one local step of every member.

Why: a small model's step is mostly Python and dispatch, not arithmetic. Digits' MLP on
this project's 2-core machine: one model 1.12 ms per step (17 GFLOPS of useful work), ten
stacked 2.5 ms, four hundred 106 ms (73 GFLOPS). A sweep's runs of one architecture
(``stack_key``: alphas, seeds, methods whose local training is plain SGD) therefore train
together: each round, all their clients' steps in one computation.

What each member computes is its own client's local training exactly as ``training.trainer``
does it (Eq. 9, CE + beta R(z); SGD with momentum and weight decay, the same batch order
from the same per (seed, round, client) stream), up to fp32 round-off (the sums run in
another order; ``tests/training/test_stacked.py``):

- Members finish at different steps (clients differ in size). They are sorted by their
  number of steps, longest first, so the members still training at step s are a prefix
  of the stack: a view, no copy, and a finished member costs nothing.
- Batches differ in size (each epoch's last one). Every batch is padded to the batch size
  with masked rows: the loss is the mean over the real rows (CE, and the regularizer's
  ``masked`` form, which only FedDecorr and ``none`` have), so the gradient is the
  unpadded batch's. The padding costs the arithmetic of the missing rows, at most one
  batch per member and epoch.

Not stacked (``stack_reason`` says why; the run trains on its own): methods with local
hooks (FedProx, MOON, SCAFFOLD, FedETF), regularizers without a masked form, models with
buffers (BatchNorm), augmentation, bf16, ``--compile``.
"""
from __future__ import annotations

import copy
import time
from typing import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..regularizers import build_masked_regularizer
from . import fast as fastpath
from ..methods.hooks import NO_HOOKS
from .local import at_least_fp32, batches, epoch_record
from .stackable import stack_key, stack_reason
from .trainer import Job, StepSpec, Trained

class Delivered:
    """A round's trained clients handed to ``engine.Session.rounds`` (an iterator), with
    the seconds the stacked round took (its ``local_seconds``)."""

    def __init__(self, results: list[Trained], seconds: float):
        self._it, self.seconds = iter(results), seconds

    def __iter__(self):
        return self

    def __next__(self) -> Trained:
        return next(self._it)


def _schedule(epochs: int, batch_size: int, order: list[int], plans: list[list[list[torch.Tensor]]],
              offsets: list[int], device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per stack position and step: the rows of the concatenated data (padded), their 0/1
    mask and the step's epoch."""
    steps = [sum(len(e) for e in plans[i]) for i in order]
    m, s_max = len(order), max(steps)
    idx = torch.zeros(m, s_max, batch_size, dtype=torch.long)
    mask = torch.zeros(m, s_max, batch_size)
    epoch = torch.zeros(m, s_max, dtype=torch.long)
    for pos, i in enumerate(order):
        if not steps[pos]:  # a client with no batch (no sample, or one): never active, keeps its start
            continue
        flat = torch.cat([b for e in plans[i] for b in e]) + offsets[i]
        sizes = torch.tensor([len(b) for e in plans[i] for b in e])
        step_of = torch.repeat_interleave(torch.arange(len(sizes)), sizes)
        starts = torch.cumsum(sizes, 0) - sizes
        col = torch.arange(len(flat)) - starts[step_of]
        idx[pos, step_of, col] = flat
        mask[pos, step_of, col] = 1.0
        epoch[pos, : len(sizes)] = torch.repeat_interleave(torch.arange(epochs), torch.tensor([len(e) for e in plans[i]]))
    return idx.to(device), mask.to(device), epoch.to(device)


def train_stacked(template: nn.Module, spec: StepSpec, masked_reg: Callable | None, jobs: list[Job], *, epochs: int,
                  batch_size: int) -> list[Trained]:
    """Train every job's client for ``epochs`` as one stack; returns ``Trained`` in job
    order (hooks ``NO_HOOKS``: only methods without local hooks stack)."""
    device = next(template.parameters()).device
    names = [n for n, _ in template.named_parameters()]
    scratch = copy.deepcopy(template)
    meta = copy.deepcopy(template).to("meta")
    # Each member's batch order for all epochs, drawn as training.trainer draws it.
    plans = [[batches(len(j.y), batch_size, j.generator) for _ in range(epochs)] for j in jobs]
    steps = [sum(len(e) for e in p) for p in plans]
    order = sorted(range(len(jobs)), key=lambda i: -steps[i])  # members still training: a prefix
    offsets, n = [], 0
    for j in jobs:
        offsets.append(n)
        n += len(j.y)
    x_all = torch.cat([j.x for j in jobs])
    y_all = torch.cat([j.y for j in jobs])
    idx, mask, epoch_of = _schedule(epochs, batch_size, order, plans, offsets, device)
    params = _start_params(template, scratch, jobs, order, device)
    bufs = {k: torch.zeros_like(v) for k, v in params.items()} if spec.momentum != 0 else None
    sums = torch.zeros(len(jobs), epochs, 3, dtype=torch.float64, device=device)
    step_grad = torch.func.vmap(torch.func.grad(_stack_loss(meta, spec, masked_reg, device), has_aux=True))
    active = [sum(1 for s_i in steps if s_i > s) for s in range(steps[order[0]])]
    hooks = [jobs[i].on_step for i in order]
    for s, m in enumerate(active):
        rows = idx[:m, s]
        w = mask[:m, s]
        xb = spec.to_float(x_all[rows.reshape(-1)]).reshape(m, batch_size, *x_all.shape[1:])
        grads, (ce, r) = step_grad({k: v[:m] for k, v in params.items()}, xb, y_all[rows], w)
        with torch.no_grad():
            _sgd_step(params, grads, bufs, names, m, spec)
            b = w.sum(1).double()
            e = epoch_of[:m, s]
            pos = torch.arange(m, device=device)
            sums[pos, e, 0] += ce.double() * b
            sums[pos, e, 1] += r.double() * b
        for h in hooks[:m]:
            if h is not None:
                h()
    return _unstack(jobs, order, params, names, sums.cpu(), plans, steps, spec.beta)


def _start_params(template: nn.Module, scratch: nn.Module, jobs: list[Job], order: list[int], device) -> dict:
    """Each member's starting weights (``Job.start`` on a scratch copy), stacked in
    ``order``: parameter name -> (members, *shape)."""
    params = {k: torch.empty((len(jobs), *v.shape), dtype=v.dtype, device=device)
              for k, v in template.named_parameters()}
    for pos, i in enumerate(order):
        if jobs[i].start(scratch) is not NO_HOOKS:
            raise RuntimeError(f"client {jobs[i].client}: the method returned local hooks; it cannot be stacked")
        for k, v in scratch.named_parameters():
            params[k][pos].copy_(v.detach())
    return params


def _unstack(jobs: list[Job], order: list[int], params: dict, names: list[str], sums: torch.Tensor, plans: list,
             steps: list[int], beta: float) -> list[Trained]:
    """The stack taken apart: each member's weights and epoch records, in job order."""
    out: list[Trained | None] = [None] * len(jobs)
    for pos, i in enumerate(order):
        state = {k: params[k][pos].detach().to("cpu", copy=True).contiguous() for k in names}
        counts = [(sum(len(b) for b in e), len(e)) for e in plans[i]]
        records = [epoch_record(e + 1, ce, rg, ex, n_seen, st, beta)
                   for e, ((ce, rg, ex), (n_seen, st)) in enumerate(zip(sums[pos].tolist(), counts))]
        out[i] = Trained(jobs[i].client, records, state, steps[i], NO_HOOKS)
    return out


def _stack_loss(meta: nn.Module, spec: StepSpec, reg: Callable | None, device) -> Callable:
    """One member's loss of a padded batch (weights ``w``: 1 for a real sample, 0 for
    padding), CE + beta R, its forward under the run's autocast (bf16: as a lone run's,
    ``local.step_loss``); returns (loss, (ce, r)) for ``torch.func.grad``."""
    autocast, beta = spec.fast.autocast, spec.beta

    def loss(p, x, y, w):
        with torch.autocast(device.type, dtype=autocast or torch.bfloat16, enabled=autocast is not None):
            logits, z = torch.func.functional_call(meta, p, (x,))
        logits, z = at_least_fp32(logits), at_least_fp32(z)
        nw = w.sum()
        ce = (F.cross_entropy(logits, y, reduction="none") * w).sum() / nw
        if reg is None:
            return ce, (ce.detach(), torch.zeros_like(ce))
        r = reg(z, logits, w)
        return ce + beta * r, (ce.detach(), r.detach())

    return loss


def _sgd_step(params: dict, grads: dict, bufs: dict | None, names: list[str], m: int, spec: StepSpec) -> None:
    """torch.optim.SGD's update of the first m members, op for op (dampening 0, no Nesterov)."""
    for k in names:
        p, g = params[k][:m], grads[k]
        if spec.weight_decay != 0:
            g = g.add(p, alpha=spec.weight_decay)
        if bufs is not None:
            g = bufs[k][:m].mul_(spec.momentum).add_(g)
        p.add_(g, alpha=-spec.lr)


def train_together(preps: list, *, log: Callable[[str], None] | None = None, stop=None, faults=None,
                   on_step: Callable[[], None] | None = None) -> list:
    """Train prepared runs in lockstep, each round's clients of all runs of one
    ``stack_key`` as one stack; each run's files are what ``engine.train`` writes (``run.json``
    records ``stacked``: the runs in the stack). Returns per run its summary (a dict) or
    the exception that ended it (``Diverged``, ``Interrupted``, ``CollapseLabError``, or any
    other error of that run alone); the others go on. A stop request is seen between
    rounds: the round under way finishes."""
    from .stops import StopFlag

    stop = stop or StopFlag()
    out: list = [None] * len(preps)
    live = _start(preps, out, on_step, log, stop, faults)
    masked = {}  # stack key -> the regularizer's masked form
    for entry in live:
        c = entry[1].ctx.cfg
        if stack_key(c) not in masked:
            masked[stack_key(c)] = build_masked_regularizer(c.reg, num_classes=entry[1].ctx.p.dataset.num_classes,
                                                            **c.reg_options)
    with fastpath.no_tf32():
        while live:
            t0 = time.time()
            results = {} if stop.is_set() else _train_round(live, masked)
            seconds = time.time() - t0
            still = []
            for entry in live:
                i, s, gen, _ = entry
                try:
                    entry[3] = gen.send(Delivered(results.get(i, []), seconds))
                    still.append(entry)
                except StopIteration as done:
                    out[i] = s.finish(done.value)
                except Exception as e:  # noqa: BLE001 -- this run's outcome
                    out[i] = e
            live = still
    return out


def _start(preps: list, out: list, on_step, log, stop, faults) -> list[list]:
    """Each run's session opened and its first round's jobs taken: [index, session, rounds
    generator, this round's jobs]; a run that cannot start, or is complete already, has its
    outcome in ``out`` (the others go on)."""
    from .engine import Session

    live: list[list] = []
    for i, p in enumerate(preps):
        try:
            s = Session(p, on_step, log, stop=stop, faults=faults, extra={"stacked": len(preps)})
            reason = stack_reason(p.config, s.ctx.model, s.spec)
            if reason:
                raise ValueError(f"{p.path.name} cannot be stacked: {reason}")
            gen = s.rounds()
            live.append([i, s, gen, next(gen)])
        except StopIteration as done:
            out[i] = s.finish(done.value)
        except Exception as e:  # noqa: BLE001 -- this run's outcome; the others go on
            out[i] = e
    return live


def _train_round(live: list[list], masked: dict) -> dict[int, list[Trained]]:
    """One round's clients of every live run, each ``stack_key``'s as one stack: run index
    -> its trained clients in job order."""
    results: dict[int, list[Trained]] = {}
    groups: dict[tuple, list[list]] = {}
    for entry in live:
        groups.setdefault(stack_key(entry[1].ctx.cfg), []).append(entry)
    for key, group in groups.items():
        first = group[0][1]
        jobs = [j for entry in group for j in entry[3]]
        trained = train_stacked(first.ctx.model, first.spec, masked[key], jobs,
                                epochs=first.ctx.cfg.local_epochs, batch_size=first.ctx.cfg.batch_size)
        for entry in group:
            results[entry[0]], trained = trained[: len(entry[3])], trained[len(entry[3]) :]
    return results
