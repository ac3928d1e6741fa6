"""The client trainer: every client's local training, on every path, goes through here.

A *lane* is a model replica with its SGD optimizer; a client trains on one lane, step by
step, as Eq. 9 says: uint8 batch -> normalised input -> forward (autocast) -> CE + beta R(z)
(+ the method's term, through ``LocalHooks``) in fp32 -> backward -> the method's gradient
correction -> SGD with momentum and weight decay -> the epoch's loss sums. Two options of
the trainer change how, never what:

- ``capture`` (``--cuda-graphs``, CUDA only): each step is captured once per batch size into
  a CUDA graph and replayed. At the paper's batch size one MobileNetV2 step is some 600
  small kernels, and eager PyTorch spends longer launching them than the GPU running them.
  A graph holds no Python, so only methods whose local training is plain SGD on CE + beta R
  (``Method.capturable``, hooks = ``NO_HOOKS``) and regularizers without host
  synchronisation (``graph_safe``) are captured; the engine falls back for the others.
- several lanes (``--parallel-clients``): clients of a round train side by side. On CUDA
  one host thread issues the lanes' steps on their own streams (stride scheduling); on the
  CPU each lane runs in a thread of its own with an equal share of the intra-op threads
  (on 2 cores two clients at one thread each train faster than one at two: docs/fast-path.md).

What a client computes does not depend on either. Clients of a round are independent
(each starts from the model ``Method.client_start`` gives it, with its own hooks); each
lane's momentum buffers start at zero for every client, so SGD's first step,
buf = 0 * m + g, equals a fresh optimizer's lazy clone of g bit for bit.
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Callable, Iterator

import torch
import torch.nn as nn

from .fastpath import FastPath
from ..methods.hooks import NO_HOOKS, LocalHooks
from .local import PLAIN, batches, cpu_state, epoch_raw, epoch_record, model_input, \
    step_loss

# Eager steps before a capture: cudnn's algorithm search, lazily created handles and
# autograd's per-device state must exist before the graph records the step.
WARMUP_STEPS = 3


@dataclass
class StepSpec:
    """What one local step computes, the same for every client of a run."""

    to_float: Callable[[torch.Tensor], torch.Tensor]
    lr: float
    momentum: float
    weight_decay: float
    reg: Callable | None
    beta: float
    fast: FastPath


@dataclass
class Job:
    """One client's local training in a round."""

    client: int
    x: torch.Tensor  # the client's samples (stored dtype, on the device)
    y: torch.Tensor
    generator: torch.Generator  # batch order (the per (seed, round, client) stream)
    aug_generator: torch.Generator  # augmentation draws
    start: Callable[[nn.Module], LocalHooks]  # loads the starting model into a replica; returns its hooks
    on_step: Callable[[], None] | None = None


@dataclass
class Trained:
    client: int
    history: list[dict]  # one record per epoch (``local.epoch_record``)
    state: dict[str, torch.Tensor]  # CPU, contiguous
    steps: int
    hooks: LocalHooks  # the client's own state during training, handed to ``Method.client_end``


class Lane:
    """A model replica with its optimizer; with ``capture`` also one CUDA graph per batch
    size, its own stream and graph memory pool (shared by its graphs: they run one at a
    time and keep nothing between replays)."""

    def __init__(self, model: nn.Module, spec: StepSpec, capture: bool = False):
        self.model, self.spec, self.capture = model, spec, capture
        self.forward = spec.fast.forward if spec.fast.forward is not None else model
        self.device = next(model.parameters()).device
        params = [p for p in model.parameters() if p.requires_grad]  # frozen ones (FedETF's classifier) stay out
        self.opt = torch.optim.SGD(params, lr=spec.lr, momentum=spec.momentum, weight_decay=spec.weight_decay)
        # Momentum buffers exist from the start (zeros): every step takes the same branch of
        # SGD, and a graph holds no lazy first-step clone.
        self.buffers = []
        if spec.momentum != 0:
            for p in params:
                self.opt.state[p]["momentum_buffer"] = buf = torch.zeros_like(p)
                self.buffers.append(buf)
        self.sums = torch.zeros(3, dtype=torch.float64, device=self.device)  # this epoch's sum of b*CE, b*R, b*extra
        self.programs: dict[int, tuple] = {}  # batch size -> (graph, static x, static y)
        self.stream = torch.cuda.Stream(self.device) if capture else None
        self.pool = torch.cuda.graph_pool_handle() if capture else None
        self.captures = 0
        self.prepare_seconds = 0.0

    def context(self):
        """Work issued inside runs on the lane's stream."""
        return torch.cuda.stream(self.stream) if self.stream is not None else contextlib.nullcontext()

    def _step(self, xb: torch.Tensor, yb: torch.Tensor, hooks: LocalHooks = NO_HOOKS, epoch: int = 0,
              cache: bool = True) -> None:
        spec = self.spec
        x = model_input(spec.to_float(xb), spec.fast)
        # autocast's weight-cast cache must be off while capturing (PyTorch's CUDA graph
        # notes); it only saves re-casting a weight used twice, so values are unchanged.
        loss, ce, r, e = step_loss(self.model, self.forward, x, yb, fast=spec.fast, reg=spec.reg, beta=spec.beta,
                                   hooks=hooks, epoch=epoch, cache=cache)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        hooks.before_step(self.model)
        self.opt.step()
        b = yb.shape[0]
        self.sums[0].add_(ce.detach().double() * b)
        if r is not None:
            self.sums[1].add_(r.detach().double() * b)
        if e is not None:
            self.sums[2].add_(e.detach().double() * b)

    def prepare(self, sizes: set[int], x: torch.Tensor, y: torch.Tensor) -> None:
        """Capture graphs for these batch sizes (a no-op without ``capture``). Warm-up
        steps change the lane's weights and optimizer state: call this before a client's
        model is loaded. The seconds spent add to ``prepare_seconds``."""
        new = sorted(sizes - set(self.programs)) if self.capture else []
        if not new:
            return
        t0 = time.perf_counter()
        for b in new:
            sx, sy = x[:b].clone(), y[:b].clone()  # real samples for the warm-up steps
            self.stream.wait_stream(torch.cuda.current_stream(self.device))
            with torch.cuda.stream(self.stream):
                for _ in range(WARMUP_STEPS):
                    self._step(sx, sy)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, pool=self.pool, stream=self.stream, capture_error_mode="thread_local"):
                self._step(sx, sy, cache=False)
            self.captures += 1
            self.programs[b] = (graph, sx, sy)
        torch.cuda.synchronize(self.device)
        self.prepare_seconds += time.perf_counter() - t0

    def start(self, job: Job) -> LocalHooks:
        """Fresh optimizer state and loss sums, training mode, the client's starting model."""
        if self.buffers:
            torch._foreach_zero_(self.buffers)  # one call, not one per parameter
        self.sums.zero_()
        self.model.train()
        hooks = job.start(self.model)
        if self.capture and hooks is not NO_HOOKS:
            raise RuntimeError(f"client {job.client}: the method returned local hooks, which a CUDA graph cannot hold")
        return hooks

    def train(self, job: Job, epochs: int, batch_size: int, beta: float) -> Trained:
        """Train one client start to end on this lane (the sequential schedule)."""
        hooks = self.start(job)
        steps = client_steps(self, job, hooks, epochs, batch_size)
        while True:
            try:
                next(steps)
            except StopIteration as done:
                sums, counts = done.value
                break
        return trained(job.client, sums, counts, cpu_state(self.model.state_dict()), hooks, beta)

    def step(self, xb: torch.Tensor, yb: torch.Tensor, hooks: LocalHooks, epoch: int) -> None:
        if not self.capture:
            self._step(xb, yb, hooks, epoch)
            return
        graph, sx, sy = self.programs[len(yb)]
        sx.copy_(xb)
        sy.copy_(yb)
        graph.replay()


def client_steps(lane: Lane, job: Job, hooks: LocalHooks, epochs: int, batch_size: int) -> Iterator[None]:
    """Issue a client's steps one at a time (yields after each); returns the per-epoch
    loss sums (on the device) and (samples, steps) per epoch."""
    sums = torch.zeros(epochs, 3, dtype=torch.float64, device=lane.device)
    counts = []
    for e in range(epochs):
        n_seen = steps = 0
        for xb, yb in epoch_raw(job.x, job.y, batches(len(job.y), batch_size, job.generator), lane.spec.fast,
                                job.aug_generator):
            lane.step(xb, yb, hooks, e)
            steps += 1
            n_seen += len(yb)
            if job.on_step is not None:
                job.on_step()
            yield
        sums[e].copy_(lane.sums)
        lane.sums.zero_()
        counts.append((n_seen, steps))
    return sums, counts


def trained(client: int, sums: torch.Tensor, counts: list, state: dict, hooks: LocalHooks, beta: float) -> Trained:
    """The client's result from its per-epoch loss sums (epochs x 3: CE, R, extra) and counts."""
    records = [epoch_record(e + 1, ce, reg, extra, n_seen, steps, beta)
               for e, ((ce, reg, extra), (n_seen, steps)) in enumerate(zip(sums.tolist(), counts))]
    return Trained(client, records, state, sum(c[1] for c in counts), hooks)


def train_client(model: nn.Module, x: torch.Tensor, y: torch.Tensor, to_float: Callable, *, epochs: int,
                 batch_size: int, lr: float, momentum: float, weight_decay: float, reg: Callable | None, beta: float,
                 generator: torch.Generator, hooks: LocalHooks = NO_HOOKS, on_step: Callable[[], None] | None = None,
                 fast: FastPath = PLAIN, aug_generator: torch.Generator | None = None) -> list[dict]:
    """Train ``model`` in place as one client on a lane of its own (the engine's path with
    one lane); returns one record per epoch: the sample-weighted mean loss split into
    cross-entropy, regularizer and the method's term, samples and optimizer steps."""
    lane = Lane(model, StepSpec(to_float, lr, momentum, weight_decay, reg, beta, fast))
    job = Job(0, x, y, generator, aug_generator if aug_generator is not None else torch.Generator().manual_seed(0),
              start=lambda m: hooks, on_step=on_step)
    return lane.train(job, epochs, batch_size, beta).history
