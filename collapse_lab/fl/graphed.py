"""Local training as step programs, several clients of a round at once (captured on CUDA).

Why: at the paper's batch size (64 CIFAR images) one MobileNetV2 step is some 600 small
kernels, and eager PyTorch spends longer launching them than the GPU spends running them.
Here a client's whole SGD step -- uint8 batch -> normalised input -> forward (autocast) ->
CE + beta R(z) in fp32 (Eq. 9) -> backward -> SGD with momentum and weight decay -> the
epoch's loss sums -- is captured once per batch size into a CUDA graph and replayed. Several
clients of a round train at the same time, each on a *lane*: its own model replica,
optimizer, graphs, graph memory pool and CUDA stream, so that independent clients fill the
GPU together.

What a client computes does not change. Clients of a round are independent (each starts
from the model ``Method.client_start`` gives it), and each sees exactly the batches,
augmentation draws and SGD updates of ``local.train_client``: its momentum buffers start
at zero, so SGD's first step, buf = 0 * m + g, equals the eager optimizer's lazy clone of g.
On the CPU the same programs run uncaptured, each lane in its own thread with an equal
share of the intra-op threads: on 2 cores two MobileNetV2 clients at one thread each train
faster together than one client on two threads (README, Fast path). The tests compare
them with ``train_client`` there.

It serves methods whose local training is plain SGD on CE + beta R (``Method.lane_safe``:
fedavg, fedavgm, fednova, fedbn) and regularizers a graph can hold
(``RegSpec.graph_safe``: all but feduv).
"""
from __future__ import annotations

import contextlib
import heapq
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterator

import torch
import torch.nn as nn

from .local import (NO_HOOKS, FastPath, batch_sizes, batches, cpu_state, epoch_raw, epoch_record, model_input,
                    num_batches, step_loss)

# Eager steps before a capture: cudnn's algorithm search, lazily created handles and
# autograd's per-device state must exist before the graph records the step.
WARMUP_STEPS = 3


@dataclass
class StepSpec:
    """What one local step computes: the arguments of ``train_client`` a program bakes in."""

    to_float: Callable[[torch.Tensor], torch.Tensor]
    lr: float
    momentum: float
    weight_decay: float
    reg: Callable | None
    beta: float
    fast: FastPath


class Lane:
    """A model replica with its SGD optimizer and one static step program per batch size;
    with ``capture`` (CUDA) also its own stream and graph memory pool. The pool is shared
    by the lane's graphs: they run one at a time on one stream and keep nothing in it
    between replays (weights, buffers, momentum and sums live outside it)."""

    def __init__(self, model: nn.Module, spec: StepSpec, capture: bool):
        self.model, self.spec, self.capture = model, spec, capture
        self.device = next(model.parameters()).device
        params = [p for p in model.parameters() if p.requires_grad]
        self.opt = torch.optim.SGD(params, lr=spec.lr, momentum=spec.momentum, weight_decay=spec.weight_decay)
        # Momentum buffers exist from the start (zeros): every step, the first included,
        # takes the same branch of SGD, and the graph holds no lazy first-step clone.
        self.buffers = []
        if spec.momentum != 0:
            for p in params:
                self.opt.state[p]["momentum_buffer"] = buf = torch.zeros_like(p)
                self.buffers.append(buf)
        self.sums = torch.zeros(2, dtype=torch.float64, device=self.device)  # this epoch's sum of b*CE, b*R
        self.programs: dict[int, tuple] = {}  # batch size -> (graph or None, static x, static y)
        self.stream = torch.cuda.Stream(self.device) if capture else None
        self.pool = torch.cuda.graph_pool_handle() if capture else None
        self.captures = 0
        self.prepare_seconds = 0.0

    def context(self):
        """Work issued inside runs on the lane's stream."""
        return torch.cuda.stream(self.stream) if self.stream is not None else contextlib.nullcontext()

    def _step(self, sx: torch.Tensor, sy: torch.Tensor, cache: bool = True) -> None:
        """One SGD step on the static batch, as ``train_client`` takes it with NO_HOOKS."""
        spec, fast = self.spec, self.spec.fast
        x = model_input(spec.to_float(sx), fast)
        # autocast's weight-cast cache must be off while capturing (PyTorch's CUDA graph
        # notes); it only saves re-casting a weight used twice, so values are unchanged.
        loss, ce, r, _ = step_loss(self.model, self.model, x, sy, fast=fast, reg=spec.reg, beta=spec.beta, cache=cache)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        b = sy.shape[0]
        self.sums[0].add_(ce.detach().double() * b)
        if r is not None:
            self.sums[1].add_(r.detach().double() * b)

    def prepare(self, sizes: set[int], x: torch.Tensor, y: torch.Tensor) -> None:
        """Programs for these batch sizes. A capture runs warm-up steps that change the
        lane's weights and optimizer state: call this before the client's model is loaded.
        The seconds spent (warm-ups and captures, waited for) add to ``prepare_seconds``."""
        new = sorted(sizes - set(self.programs))
        if not new:
            return
        t0 = time.perf_counter()
        for b in new:
            sx, sy = x[:b].clone(), y[:b].clone()  # real samples for the warm-up steps
            graph = None
            if self.capture:
                self.stream.wait_stream(torch.cuda.current_stream(self.device))
                with torch.cuda.stream(self.stream):
                    for _ in range(WARMUP_STEPS):
                        self._step(sx, sy)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph, pool=self.pool, stream=self.stream, capture_error_mode="thread_local"):
                    self._step(sx, sy, cache=False)
                self.captures += 1
            self.programs[b] = (graph, sx, sy)
        if self.capture:
            torch.cuda.synchronize(self.device)
        self.prepare_seconds += time.perf_counter() - t0

    def reset(self) -> None:
        """Fresh optimizer state and loss sums for a new client (its model is loaded by the method)."""
        for buf in self.buffers:
            buf.zero_()
        self.sums.zero_()

    def step(self, xb: torch.Tensor, yb: torch.Tensor) -> None:
        graph, sx, sy = self.programs[len(yb)]
        sx.copy_(xb)
        sy.copy_(yb)
        if graph is None:
            self._step(sx, sy)
        else:
            graph.replay()


@dataclass
class Job:
    """One client's local training in a round."""

    client: int
    x: torch.Tensor  # the client's samples (stored dtype, on the device)
    y: torch.Tensor
    generator: torch.Generator  # batch order (the engine's per (seed, round, client) stream)
    aug_generator: torch.Generator  # augmentation draws
    start: Callable[[nn.Module], object]  # loads the starting model into a replica; returns the hooks
    on_step: Callable[[], None] | None = None


@dataclass
class Trained:
    client: int
    history: list[dict]  # one record per epoch, as train_client returns them
    state: dict[str, torch.Tensor]  # CPU, contiguous
    steps: int


def client_steps(lane: Lane, job: Job, epochs: int, batch_size: int) -> Iterator[None]:
    """Issue a client's steps one at a time (yields after each); returns the per-epoch
    loss sums (on the device) and (samples, steps) per epoch."""
    sums = torch.zeros(epochs, 2, dtype=torch.float64, device=lane.device)
    counts = []
    for e in range(epochs):
        n_seen = steps = 0
        for xb, yb in epoch_raw(job.x, job.y, batches(len(job.y), batch_size, job.generator), lane.spec.fast,
                                job.aug_generator):
            lane.step(xb, yb)
            steps += 1
            n_seen += len(yb)
            if job.on_step is not None:
                job.on_step()
            yield
        sums[e].copy_(lane.sums)
        lane.sums.zero_()
        counts.append((n_seen, steps))
    return sums, counts


def assign(jobs: list[Job], lanes: int, batch_size: int, epochs: int) -> list[list[Job]]:
    """Clients to lanes, largest first, each to the lane with the fewest steps so far
    (longest-processing-time-first): the lanes' totals come out close to equal."""
    queues: list[list[Job]] = [[] for _ in range(lanes)]
    loads = [0] * lanes
    for job in sorted(jobs, key=lambda j: -len(j.y)):
        i = min(range(lanes), key=lambda i: (loads[i], i))
        queues[i].append(job)
        loads[i] += num_batches(len(job.y), batch_size) * epochs
    return queues


def train_round(lanes: list[Lane], jobs: list[Job], *, epochs: int, batch_size: int, beta: float,
                stop: Callable[[], bool] = lambda: False, threads: bool | None = None) -> dict[int, Trained]:
    """Train the jobs on the lanes side by side; returns the trained clients.

    On CUDA clients are assigned to lanes up front (``assign``), every graph the round needs
    is captured before any client trains (a capture synchronises the whole device), and the
    steps are issued by stride scheduling (``_interleave``) so that all lanes stay busy until
    they finish together; the host waits for the GPU once, at the end. On the CPU several
    lanes run in threads (``_threads``), each taking the largest client left when it comes
    free. Once ``stop()`` is true no further client starts and those under way finish.
    ``threads``: None = threads on the CPU with several lanes; False = stride scheduling
    there too (what the tests of the CUDA order use)."""
    capture = lanes[0].capture
    if threads is None:
        threads = not capture and len(lanes) > 1
    if threads:
        # One queue, largest client first, each to the next lane that comes free: on the
        # CPU a step costs about its number of samples (a client's last batch is smaller),
        # so a static assignment by steps would leave one thread idle at the end.
        queue = sorted(jobs, key=lambda j: -len(j.y))
        queues = [queue] * len(lanes)
        lock = threading.Lock()
        for job in jobs:  # one progress callback at a time
            job.on_step = _locked(job.on_step, lock) if job.on_step is not None else None
    else:
        queues = assign(jobs, len(lanes), batch_size, epochs)
    for lane, queue in zip(lanes, queues):
        for job in queue:
            lane.prepare(batch_sizes(len(job.y), batch_size), job.x, job.y)
    if capture:  # the starting models and the clients' data were written on the current stream
        current = torch.cuda.current_stream(lanes[0].device)
        for lane in lanes:
            lane.stream.wait_stream(current)
    taking = threading.Lock()

    def take(i: int) -> Job | None:
        with taking:
            return queues[i].pop(0) if queues[i] and not stop() else None

    current_job: list[tuple[Job, Iterator] | None] = [None] * len(lanes)
    finished: dict[int, tuple] = {}

    def advance(i: int) -> bool:
        """Issue lane i's next step (starting its next client when needed); False when it has none."""
        lane = lanes[i]
        while True:
            if current_job[i] is None:
                job = take(i)
                if job is None:
                    return False
                hooks = job.start(lane.model)
                if hooks is not NO_HOOKS:
                    raise RuntimeError(f"client {job.client}: the method returned local hooks; it is not lane_safe")
                lane.reset()
                current_job[i] = (job, client_steps(lane, job, epochs, batch_size))
            job, steps = current_job[i]
            try:
                next(steps)
                return True
            except StopIteration as done:
                # CUDA: a device copy, moved to the host after the round (moving it now would
                # wait for the GPU); CPU: the stored form at once
                sd = lane.model.state_dict()
                state = {k: v.detach().clone() for k, v in sd.items()} if lane.capture else cpu_state(sd)
                finished[job.client] = (done.value, state)
                current_job[i] = None

    if threads:
        _threads(lanes, advance)
    else:
        _interleave(lanes, queues, advance, epochs, batch_size)
    out = {}
    for k, ((sums, counts), state) in finished.items():
        records = [epoch_record(e + 1, ce, reg, 0.0, n_seen, steps, beta)
                   for e, ((ce, reg), (n_seen, steps)) in enumerate(zip(sums.tolist(), counts))]
        out[k] = Trained(k, records, cpu_state(state) if capture else state, sum(c[1] for c in counts))
    return out


def _interleave(lanes: list[Lane], queues: list[list[Job]], advance, epochs: int, batch_size: int) -> None:
    """One host thread issues the lanes' steps by stride scheduling, each lane at a rate
    proportional to its total steps (CUDA: the lanes' streams run them concurrently)."""
    totals = [sum(num_batches(len(j.y), batch_size) * epochs for j in q) for q in queues]
    heap = [(0.0, i) for i in range(len(lanes)) if queues[i]]
    while heap:
        virtual_time, i = heapq.heappop(heap)
        with lanes[i].context():
            if advance(i):
                heapq.heappush(heap, (virtual_time + 1.0 / max(totals[i], 1), i))
    if lanes[0].capture:
        torch.cuda.synchronize(lanes[0].device)


def _threads(lanes: list[Lane], advance) -> None:
    """CPU: each lane in a thread of its own, taking clients from the shared queue, with the
    intra-op threads split evenly between lanes (PyTorch ops release the GIL, and autograd
    runs CPU backward on the calling thread). Every client's arithmetic is that of one
    thread at that count, whatever the other lanes do. An error in a lane, or a KeyboardInterrupt (a second
    Ctrl-C) in the main thread, stops all lanes at their next step and is raised here."""
    total = torch.get_num_threads()
    per_lane = max(1, total // len(lanes))
    abort = threading.Event()
    errors: list[BaseException] = []

    def work(i: int) -> None:
        torch.set_num_threads(per_lane)  # this thread's OpenMP pool
        try:
            while not abort.is_set() and advance(i):
                pass
        except BaseException as e:  # noqa: BLE001 -- handed to the main thread
            errors.append(e)
            abort.set()

    threads = [threading.Thread(target=work, args=(i,), name=f"lane-{i}", daemon=True) for i in range(len(lanes))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():  # short joins: signal handlers run in the main thread meanwhile
                t.join(0.2)
    except BaseException:
        abort.set()
        for t in threads:
            t.join()
        raise
    finally:
        torch.set_num_threads(total)  # new threads take the last count set anywhere
    if errors:
        raise errors[0]


def _locked(fn: Callable[[], None], lock: threading.Lock) -> Callable[[], None]:
    def call() -> None:
        with lock:
            fn()

    return call
