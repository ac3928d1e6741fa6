"""How a round's clients are spread over the trainer's lanes (``training.trainer``).

``train_round`` yields the trained clients in the order of the jobs, whatever order they
finished in, so a run's files and metrics do not depend on the schedule:

- one uncaptured lane: the clients one after another; each is yielded as soon as it is
  done (its checkpoint is written while the next one trains);
- several lanes on the CPU: each lane in a thread, taking the largest client left when it
  comes free (a step costs about its number of samples, so a static split would leave
  one thread idle at the end);
- CUDA: clients assigned to lanes up front (longest first), every graph the round needs
  captured before any client trains (a capture synchronises the device), the steps issued
  by stride scheduling so that the lanes finish together; the host waits once, at the end.

Once ``stop()`` is true no further client starts; those under way finish.
"""
from __future__ import annotations

import heapq
import threading
from typing import Callable, Iterator

import torch

from .local import batch_sizes, cpu_state, num_batches
from .trainer import Job, Lane, Trained, client_steps, trained


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
                stop: Callable[[], bool] = lambda: False, threads: bool | None = None) -> Iterator[Trained]:
    """Train the jobs on the lanes; yields ``Trained`` in job order. ``threads``: None =
    threads on the CPU with several lanes; False = stride scheduling there too (what the
    tests of the CUDA order use)."""
    capture = lanes[0].capture
    if len(lanes) == 1 and not capture:
        yield from _sequential(lanes[0], jobs, epochs, batch_size, beta, stop)
        return
    if threads is None:
        threads = not capture
    if threads:
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
    rnd = _Round(lanes, queues, stop, epochs, batch_size)
    if threads:
        _threads(lanes, rnd.advance)
    else:
        _interleave(lanes, queues, rnd.advance, epochs, batch_size)
    for job in jobs:
        if job.client in rnd.finished:
            (sums, counts), state, hooks = rnd.finished[job.client]
            yield trained(job.client, sums, counts, cpu_state(state) if capture else state, hooks, beta)


class _Round:
    """The lanes' progress through a round: each lane's current client and its step
    generator, the clients finished, and the locks that let lanes run as threads."""

    def __init__(self, lanes: list[Lane], queues: list[list[Job]], stop: Callable[[], bool], epochs: int,
                 batch_size: int):
        self.lanes, self.queues, self.stop, self.epochs, self.batch_size = lanes, queues, stop, epochs, batch_size
        self.current: list[tuple | None] = [None] * len(lanes)
        self.finished: dict[int, tuple] = {}
        self.taking = threading.Lock()
        self.start_lock = threading.Lock()  # methods load shared per-round models in client_start

    def take(self, i: int) -> Job | None:
        with self.taking:
            return self.queues[i].pop(0) if self.queues[i] and not self.stop() else None

    def advance(self, i: int) -> bool:
        """Issue lane i's next step (starting its next client when needed); False when it has none."""
        lane = self.lanes[i]
        while True:
            if self.current[i] is None:
                job = self.take(i)
                if job is None:
                    return False
                with self.start_lock:
                    hooks = lane.start(job)
                self.current[i] = (job, hooks, client_steps(lane, job, hooks, self.epochs, self.batch_size))
            job, hooks, steps = self.current[i]
            try:
                next(steps)
                return True
            except StopIteration as done:
                # CUDA: a device copy, moved to the host after the round (moving it now would
                # wait for the GPU); CPU: the stored form at once
                sd = lane.model.state_dict()
                state = {k: v.detach().clone() for k, v in sd.items()} if lane.capture else cpu_state(sd)
                self.finished[job.client] = (done.value, state, hooks)
                self.current[i] = None


def _sequential(lane: Lane, jobs: list[Job], epochs: int, batch_size: int, beta: float, stop) -> Iterator[Trained]:
    for job in jobs:
        if stop():
            return
        yield lane.train(job, epochs, batch_size, beta)


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
    """CPU: each lane in a thread of its own, with the intra-op threads split evenly
    between lanes (PyTorch ops release the GIL, and autograd runs CPU backward on the
    calling thread); every client's arithmetic is that of one thread at that count. An
    error in a lane, or a KeyboardInterrupt (a second Ctrl-C) in the main thread, stops
    all lanes at their next step and is raised here."""
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

    workers = [threading.Thread(target=work, args=(i,), name=f"lane-{i}", daemon=True) for i in range(len(lanes))]
    try:
        for t in workers:
            t.start()
        for t in workers:
            while t.is_alive():  # short joins: signal handlers run in the main thread meanwhile
                t.join(0.2)
    except BaseException:
        abort.set()
        for t in workers:
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
