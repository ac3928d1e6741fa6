"""How a run stops short: a request to stop (a signal, the time limit) read between
clients, the interruption it causes, and divergence (a non-finite loss or weight)."""
from __future__ import annotations

import time
from pathlib import Path

import torch

from ..timelimit import TIME_LIMIT


class StopFlag:
    """A request to stop (SIGINT/SIGTERM), set by whoever runs the training (the CLI's
    signal handlers, a test) and read between clients: no module-level state.
    ``deadline``: the ``time.time()`` of ``--time-limit`` (``timelimit``): past it the
    flag is set; before it, a round starts only if ``fits`` it. ``clock``: where "now" is
    read (``time.time``; a test gives its own)."""

    def __init__(self, deadline: float | None = None, clock=None) -> None:
        self.requested: str | None = None  # the signal's name once one arrived
        self.deadline, self.clock = deadline, clock or (lambda: time.time())
        self.longest_round = 0.0  # seconds: the longest round this process trained (any run)

    def request(self, signame: str = "SIGINT") -> None:
        self.requested = signame

    def is_set(self) -> bool:
        if self.requested is None and self.deadline is not None and self.clock() >= self.deadline:
            self.requested = TIME_LIMIT
        return self.requested is not None

    def fits(self, seconds: float) -> bool:
        """Whether a round of ``seconds`` started now ends before the deadline."""
        return self.deadline is None or self.clock() + seconds <= self.deadline


class Interrupted(Exception):
    """``client``: the last client stored in round ``round`` (None: none was)."""

    def __init__(self, path: Path, r: int, k: int | None, signame: str):
        super().__init__(f"{signame}: stopped {path.name} in round {r} after client {k}")
        self.path, self.round, self.client, self.signame = path, r, k, signame


class Diverged(Exception):
    """A non-finite loss or weight: the run stops at round ``round`` (``client`` None: the
    aggregated global model); rounds before it stay stored and readable."""

    def __init__(self, path: Path, r: int, k: int | None, what: str):
        where = f"client {k}" if k is not None else "the aggregated global model"
        super().__init__(f"{path.name} diverged in round {r}: {where} has a non-finite {what}")
        self.path, self.round, self.client, self.what = path, r, k, what


def non_finite(state: dict[str, torch.Tensor]) -> str | None:
    """The first floating-point tensor with a NaN or inf, or None."""
    for name, v in state.items():
        if v.is_floating_point() and not bool(torch.isfinite(v).all()):
            return name
    return None


def diverged(ctx, r: int, k: int | None, what: str) -> None:
    """Record the divergence in run.json (the run is never 'complete') and stop it
    (``ctx``: ``training.rounds.RunContext``)."""
    ctx.run.flush()
    ctx.run.update(status="diverged", diverged={"round": r, "client": k, "what": what})
    raise Diverged(ctx.p.path, r, k, what)
