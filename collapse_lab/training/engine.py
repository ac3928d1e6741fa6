"""The round loop: prepared run -> clients -> server rounds -> run store.

``training.prepare`` checks everything that can be checked without training and writes nothing;
``train`` then runs the rounds and writes the store. Each round: the participants' local
training on the trainer's lanes (``training.trainer``, ``training.schedule``), their checkpoints
stored in client order, the method's aggregation, the global checkpoint and method state,
an evaluation; the round counts as complete once all its files exist.
"""
from __future__ import annotations

import contextlib
import copy
import math
import time
from dataclasses import dataclass, field
from typing import Callable, Generator, Iterator

import torch

from ..devices import resolve_device
from ..errors import CollapseLabError
from ..faults import Faults
from .writer import AsyncWriter
from ..regularizers import build_regularizer
from ..seeds import PURPOSE_AUGMENT, PURPOSE_BATCHES, seed_for
from ..data import SMOKE_SAMPLES
from ..store import RunDir, parse_keep_global, parse_keep_local, retention
from . import fast as fastpath
from ..methods.evaluate import evaluate
from .local import cpu_state
from ..methods import ClientResult, EvalData, Method, make_method
from .probe import Probe
from .probing import log_layers, make_probe, probe_round
from ..store import lock
from ..timelimit import TIME_LIMIT
from .prepare import Prepared, init_model, take_lock
from .sampling import sample_clients
from .schedule import train_round
from .stops import Interrupted, StopFlag, diverged, non_finite
from .trainer import Job, Lane, StepSpec, Trained


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


class Session:
    """One run being trained: everything before its rounds (model, method, lanes, the run
    folder created or reopened), its rounds as a generator, and the end. ``train`` drives
    one session through the lanes; ``training.stacked`` drives several in lockstep, training
    their clients together."""

    def __init__(self, p: Prepared, on_step: Callable[[], None] | None = None, log: Callable[[str], None] | None = None,
                 keep_memory: bool = True, stop: StopFlag | None = None, faults: Faults | None = None,
                 extra: dict | None = None, on_round: Callable[[int], None] | None = None):
        cfg, ds, part = p.config, p.dataset, p.partition
        device = resolve_device(cfg.device)
        faults = faults if faults is not None else Faults.from_env()
        if keep_memory:
            fastpath.keep_host_memory()
        model, fast = fastpath.build(cfg, init_model(cfg, ds).to(device), len(ds.input_shape))
        # cudnn.benchmark stays off: a round has a dozen batch shapes (each client's last batch,
        # the evaluation's), and each new one would be timed for every convolution; cudnn's
        # heuristic choice needs no search (docs/fast-path.md: what the H100 showed).
        plan = p.plan
        reg = build_regularizer(cfg.reg, num_classes=ds.num_classes, **cfg.reg_options)
        self.spec = StepSpec(ds.to_float, cfg.lr, cfg.momentum, cfg.weight_decay, reg, cfg.beta, fast)
        # one lane trains on the engine's model itself (a compiled forward is bound to it)
        lanes = [Lane(model if plan.lanes == 1 else copy.deepcopy(model), self.spec, plan.capture)
                 for _ in range(plan.lanes)]
        method = make_method(cfg, model, cfg.clients)
        method.bind_clients(torch.from_numpy(part.counts).to(torch.float64))
        eval_data = EvalData(ds.test_x.to(device), ds.test_y.to(device), ds.to_float, cfg.eval_batch_size,
                             None if ds.test_domain is None else ds.test_domain.to(device),
                             None if ds.train_domain is None else
                             [sorted(set(ds.train_domain[torch.from_numpy(ix)].tolist())) for ix in part.client_indices])
        info = {"n_train": len(ds.train_y), "n_test": len(ds.test_y), "num_classes": ds.num_classes,
                "feature_dim": model.feature_dim, "client_sizes": part.sizes.tolist(), "device": str(device),
                "parallel_clients": plan.lanes, "cuda_graphs": plan.capture, "stacked": 1,
                **({"domains": list(ds.domains)} if ds.domains and len(ds.domains) <= 100 else {}), **(extra or {})}
        probe = make_probe(cfg, ds, device)
        take_lock(p)  # one writer per run (store.lock); released when the session ends
        self.writer = writer = AsyncWriter()
        self.global_state = cpu_state(model.state_dict())
        self.seconds_before = 0.0
        try:
            if p.start == 0:
                run = RunDir.create(p.path.parent, p.path.name, cfg.to_json(), part, self.global_state, info, writer,
                                    faults.point)
                run.log({"event": "round", "round": 0, **method.evaluate(model, self.global_state, eval_data)})
                if probe is not None:
                    model.load_state_dict(self.global_state)
                    run.log({"event": "probe", "round": 0, **probe(model)})
                    if cfg.probe_layers:
                        run.log({"event": "probe_layers", "round": 0, "model": "global", **probe.layers(model)})
            else:
                run = RunDir(p.path, writer, faults.point)
                self.seconds_before = float(run.meta.get("train_seconds") or 0.0)
                # provenance as a fresh run records it (the resolved lanes and graphs, not the options' "auto")
                self.global_state = _resume(run, p, model, method, device, log,
                                            {"stacked": 1, "parallel_clients": plan.lanes, "cuda_graphs": plan.capture,
                                             **(extra or {})})
        except BaseException:
            writer.close()  # pending checkpoint writes finish; the error in flight is the one to report
            lock.release(p.path)
            raise
        self.t0 = time.time()
        self.ctx = RunContext(p, run, model, method, lanes, eval_data, ds.train_x.to(device), ds.train_y.to(device),
                              [torch.from_numpy(ix).to(device) for ix in part.client_indices], stop or StopFlag(),
                              faults, on_step, log, probe, on_round or (lambda r: None),
                              seconds_before=self.seconds_before, t0=self.t0)

    def rounds(self) -> Generator[list[Job], Iterator[Trained], dict]:
        """Yields each round's jobs, takes back the trained clients (``Trained`` in job
        order); returns the last evaluation. Any error closes the writer first."""
        try:
            return (yield from _rounds(self.ctx, self.global_state))
        except BaseException:
            self.writer.close()
            lock.release(self.ctx.p.path)
            raise

    def finish(self, ev: dict) -> dict:
        """The run is complete: its status recorded; returns the summary."""
        p, run = self.ctx.p, self.ctx.run
        self.writer.close()
        try:
            run.update(status="complete", finished=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                       train_seconds=self.ctx.train_seconds())  # every start's, summed
        finally:
            lock.release(p.path)
        return {"run": str(p.path), "status": "complete", "rounds": p.config.rounds, "final_test_acc": ev["test_acc"],
                "final_test_loss": ev["test_loss"], "seconds": round(time.time() - self.t0, 2)}


def train(p: Prepared, on_step: Callable[[], None] | None = None, log: Callable[[str], None] | None = None,
          keep_memory: bool = True, stop: StopFlag | None = None, faults: Faults | None = None,
          on_round: Callable[[int], None] | None = None) -> dict:
    """Run all rounds of one prepared run into its run directory; returns a summary.
    ``keep_memory``: let the process keep freed host memory for reuse
    (``fast.keep_host_memory``); ``faults``: default ``Faults.from_env()``, read now;
    ``on_round(r)``: called once round r is stored."""
    s = Session(p, on_step, log, keep_memory, stop, faults, on_round=on_round)
    cfg, ctx = p.config, s.ctx
    rounds = s.rounds()
    with fastpath.no_tf32() if cfg.precision == "fp32" else contextlib.nullcontext():
        try:
            jobs = next(rounds)
            while True:
                jobs = rounds.send(train_round(ctx.lanes, jobs, epochs=cfg.local_epochs, batch_size=cfg.batch_size,
                                               beta=cfg.beta, stop=ctx.stop.is_set))
        except StopIteration as done:
            ev = done.value
    return s.finish(ev)


def _resume(run: RunDir, p: Prepared, model, method: Method, device, log, extra: dict | None = None) -> dict:
    """The global state and method state of the last complete round; later files discarded."""
    start, cfg = p.start, p.config
    # everything the resume reads is loaded before anything later is discarded
    global_state = run.load_state(start, None, model)
    server, clients = run.load_method_state(start)
    try:
        method.load_state(server, clients)
    except (KeyError, RuntimeError, ValueError) as e:
        raise CollapseLabError(f"{run.path.name}: the {cfg.method} state of round {start} is incomplete "
                               f"({type(e).__name__}: {e}); use --overwrite to start the run over") from None
    # an extended run: its run.json takes the new length, and --keep-local now treats
    # round ``start`` as an ordinary round of the longer run (as a run trained at that length
    # from the start would have left it). run.json first: a crash between the two steps
    # leaves it counting only rounds that are still there.
    # Retention is a view (store.retention): what the run pruned so far is recorded before its
    # policies in run.json are replaced, and a changed policy applies to the rounds trained
    # from now on.
    meta = run.meta
    keep_fields = {"pruned": {k: sorted(v) for k, v in run.pruned().items()}}
    note = retention.change_note(run.path.name, meta, cfg.keep_global, cfg.keep_local, start)
    if note:  # said by training.prepare before anything trained
        keep_fields["retention_from"] = start + 1
    run.update(**{**cfg.to_json(), "status": "running", "device": str(device), "rounds_complete": start,
                  **keep_fields, **(extra or {})})
    run.discard_after(start)
    run.prune(start, parse_keep_global(cfg.keep_global), parse_keep_local(cfg.keep_local), cfg.rounds)
    if log:
        log(f"{p.path.name}: resuming after round {start}/{cfg.rounds}")
    return global_state


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


def _rounds(ctx: RunContext, global_state: dict) -> Generator[list[Job], Iterator[Trained], dict]:
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
        results, last, local_s = [], None, 0.0
        trained = yield _jobs(ctx, r, participants, global_state)
        while True:
            t_local = time.time()
            t = next(trained, None)
            local_s += time.time() - t_local
            if t is None:
                # trained elsewhere (``training.stacked``): the round's local seconds come with the results
                local_s = getattr(trained, "seconds", local_s)
                break
            results.append(_take_client(ctx, r, t))
            last = t.client
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
