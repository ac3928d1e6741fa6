"""The round loop: prepared run -> clients -> server rounds -> run store.

Each round: the participants' local training on the trainer's lanes (``training.trainer``,
``training.schedule``), their checkpoints stored in client order, the method's aggregation,
the global checkpoint and method state, an evaluation; the round counts as complete once
all its files exist.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Generator, Iterator

import torch

from ..data import SMOKE_SAMPLES
from ..faults import Faults
from ..methods import ClientResult, EvalData, Method
from ..methods.evaluate import evaluate
from ..seeds import PURPOSE_AUGMENT, PURPOSE_BATCHES, seed_for
from ..store import RunDir, parse_keep_global, parse_keep_local
from ..timelimit import TIME_LIMIT
from .prepare import Prepared
from .probe import Probe
from .probing import log_layers, probe_round
from .sampling import sample_clients
from .stops import Interrupted, StopFlag, diverged, non_finite
from .trainer import Job, Lane, Trained


@dataclass
class RunContext:
    """Everything the rounds of one run share."""

    p: Prepared
    run: RunDir
    model: torch.nn.Module  # the engine's model: evaluations, and lane 0 when there is one lane
    method: Method
    lanes: list[Lane]
    eval_data: EvalData
    x_train: torch.Tensor
    y_train: torch.Tensor
    client_idx: list[torch.Tensor]
    stop: StopFlag = field(default_factory=StopFlag)
    faults: Faults = field(default_factory=Faults)
    on_step: Callable[[], None] | None = None
    log: Callable[[str], None] | None = None
    probe: Probe | None = None  # the global spectrum on a fixed probe set, logged each round
    on_round: Callable[[int], None] = lambda r: None  # told each round once it is stored (live logs: train --log)
    # train_seconds of the starts before this one (a resumed run sums every start) and when this one began
    seconds_before: float = 0.0
    t0: float = field(default_factory=time.time)

    def train_seconds(self) -> float:
        return round(self.seconds_before + time.time() - self.t0, 2)

    @property
    def cfg(self):
        return self.p.config


def _jobs(ctx: RunContext, r: int, participants: list[int], global_state: dict) -> list[Job]:
    cfg, device = ctx.cfg, ctx.x_train.device
    # once per round; replicas load it device to device
    start_state = global_state if device.type == "cpu" else {n: v.to(device) for n, v in global_state.items()}
    jobs = []
    for k in participants:
        ix = ctx.client_idx[k]
        if cfg.smoke:  # a smoke run: one step on the client's first few samples (the split stays whole)
            ix = ix[:SMOKE_SAMPLES]
        # Augmentation draws from its own stream, so the batch order is the same with and
        # without it, and a resumed run augments exactly as an uninterrupted one.
        jobs.append(Job(k, ctx.x_train[ix], ctx.y_train[ix],
                        torch.Generator().manual_seed(seed_for(cfg.seed, PURPOSE_BATCHES, r, k)),
                        torch.Generator().manual_seed(seed_for(cfg.seed, PURPOSE_AUGMENT, r, k)),
                        start=lambda m, k=k: ctx.method.client_start(k, r, m, start_state),
                        on_step=_step_hook(ctx, r, k)))
    return jobs


def run_rounds(ctx: RunContext, global_state: dict) -> Generator[list[Job], Iterator[Trained], dict]:
    """The rounds after ``p.start``: yields each round's jobs and takes back their trained
    clients; returns the last evaluation of the global model."""
    cfg, run, method = ctx.cfg, ctx.run, ctx.method
    keep, keep_global = parse_keep_local(cfg.keep_local), parse_keep_global(cfg.keep_global)
    start = ctx.p.start
    ev = None
    if start >= cfg.rounds:  # killed after its last round was stored: only the status is left
        ev = method.evaluate(ctx.model, global_state, ctx.eval_data)
    t0 = time.time()
    longest = 0.0  # this run's longest round here: what the next one is expected to take
    for r in range(start + 1, cfg.rounds + 1):
        if not ctx.stop.fits(longest or ctx.stop.longest_round):  # --time-limit: stop before, not during
            ctx.stop.request(TIME_LIMIT)
            raise Interrupted(ctx.p.path, r, None, TIME_LIMIT)
        t_round = time.time()
        busy0 = run.writer.busy_seconds
        prep0 = sum(lane.prepare_seconds for lane in ctx.lanes)
        participants = sample_clients(cfg, r)
        results, last, local_s = _take_clients(ctx, r, (yield _jobs(ctx, r, participants, global_state)))
        if len(results) < len(participants):  # SIGINT/SIGTERM: clients not started are not stored
            raise Interrupted(ctx.p.path, r, last, ctx.stop.requested or "SIGINT")
        t_server = time.time()
        global_state = _server_step(ctx, r, global_state, results)
        t_eval = time.time()
        ev = _evaluate(ctx, r, global_state)
        tw = time.time()
        run.flush()  # the checkpoints were written while the next clients trained
        run.log({"event": "round", "round": r, "clients": participants, "seconds": round(time.time() - t0, 3),
                 "local_seconds": round(local_s, 3),
                 **({"prepare_seconds": round(sum(lane.prepare_seconds for lane in ctx.lanes) - prep0, 3)}
                    if ctx.lanes[0].capture else {}),
                 "aggregate_seconds": round(t_eval - t_server, 3),
                 "eval_seconds": round(tw - t_eval, 3), "write_wait_seconds": round(time.time() - tw, 4),
                 "write_seconds": round(run.writer.busy_seconds - busy0, 4), **ev})
        probe_round(ctx, r, global_state)
        # The round counts as complete only once all its files exist; pruning comes after,
        # so the state a resume needs is never deleted before a newer round is recorded.
        run.update(rounds_complete=r, train_seconds=ctx.train_seconds())  # a later start adds its own
        run.prune(r, keep_global, keep, cfg.rounds)
        ctx.on_round(r)  # live logs (train --log) read the stored round
        longest = max(longest, time.time() - t_round)
        ctx.stop.longest_round = max(ctx.stop.longest_round, longest)
        if ctx.log:
            ctx.log(f"{ctx.p.path.name} round {r}/{cfg.rounds}: test acc {ev['test_acc']:.4f} "
                    f"({time.time() - t0:.1f} s)")
        if ctx.stop.is_set() and r < cfg.rounds:  # a stop during the round's last client
            raise Interrupted(ctx.p.path, r + 1, None, ctx.stop.requested)
    return ev


def _take_clients(ctx: RunContext, r: int, trained: Iterator[Trained]) -> tuple[list[ClientResult], int | None, float]:
    """Round r's clients as they come back trained (``_take_client``): their results, the
    last one taken and the seconds spent waiting for them."""
    results, last, local_s = [], None, 0.0
    while True:
        t_local = time.time()
        t = next(trained, None)
        local_s += time.time() - t_local
        if t is None:
            # trained elsewhere (``training.stacked``): the round's local seconds come with the results
            return results, last, getattr(trained, "seconds", local_s)
        results.append(_take_client(ctx, r, t))
        last = t.client


def _take_client(ctx: RunContext, r: int, t: Trained) -> ClientResult:
    """A trained client of round r: its epochs logged, divergence checked, the optional test
    evaluation, its checkpoint stored and its result handed to the method."""
    cfg, run, k = ctx.cfg, ctx.run, t.client
    run.log(*({"event": "local_epoch", "round": r, "client": k, **h} for h in t.history))
    bad = next((f"loss in epoch {h['epoch']}" for h in t.history if not math.isfinite(h["loss"])), None)
    bad = bad or (f"weight ({name})" if (name := non_finite(t.state)) else None)
    if bad:
        diverged(ctx, r, k, bad)
    if cfg.local_eval:  # optional (off by default): the client's model on the test set
        ctx.model.load_state_dict(t.state)
        run.log({"event": "local_eval", "round": r, "client": k,
                 **evaluate(ctx.model, ctx.eval_data.x, ctx.eval_data.y, ctx.eval_data.to_float,
                            ctx.eval_data.batch_size)})
    run.save_client(r, k, t.state)
    if ctx.probe is not None and cfg.probe_layers and k == 0:  # --probe-layers: client 0 as it left local training
        ctx.model.load_state_dict(t.state)
        log_layers(ctx, r, k, "client_0")
    result = ClientResult(k, t.state, len(ctx.client_idx[k]), t.steps)
    ctx.method.client_end(k, r, t.hooks, result)
    ctx.faults.point(f"client:{r}:{k}")
    return result


def _server_step(ctx: RunContext, r: int, global_state: dict, results: list[ClientResult]) -> dict:
    """Aggregate round r's clients, check the new weights and the method's server state,
    store both; returns the new global state."""
    method = ctx.method
    global_state = method.aggregate(r, global_state, results)
    if (name := non_finite(global_state)) is not None:
        diverged(ctx, r, None, f"weight ({name})")
    if (name := non_finite(method.server_state())) is not None:  # a server step (FedAvgM, FedOpt, FedDyn)
        diverged(ctx, r, None, f"server state ({name})")
    ctx.run.save_global(r, global_state)
    ctx.run.save_method_state(r, method.server_state(), method.client_state())
    return global_state


def _evaluate(ctx: RunContext, r: int, global_state: dict) -> dict:
    ev = ctx.method.evaluate(ctx.model, global_state, ctx.eval_data)
    if not all(math.isfinite(v) for key, v in ev.items() if key.startswith("test_") and isinstance(v, float)):
        # finite but huge weights (a server step of 1e38) first show here
        diverged(ctx, r, None, f"test loss ({ev.get('test_loss')})")
    return ev


def _step_hook(ctx: RunContext, r: int, k: int):
    name, point, on_step = f"step:{r}:{k}", ctx.faults.point, ctx.on_step

    def hook():
        point(name)
        if on_step is not None:
            on_step()

    return hook
