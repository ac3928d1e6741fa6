"""One run trained: everything before its rounds (model, method, lanes, the run folder
created or reopened at its last complete round), the rounds (``training.rounds``) and the end.

``training.prepare`` checks everything that can be checked without training and writes nothing;
``train`` then runs the rounds and writes the store.
"""
from __future__ import annotations

import contextlib
import copy
import time
from typing import Callable, Generator, Iterator

import torch

from ..devices import resolve_device
from ..errors import CollapseLabError
from ..faults import Faults
from .writer import AsyncWriter
from ..regularizers import build_regularizer
from ..store import RunDir, parse_keep_global, parse_keep_local, retention
from . import fast as fastpath
from .local import cpu_state
from ..methods import EvalData, Method, make_method
from .probing import make_probe
from ..store import lock
from .prepare import Prepared, init_model, take_lock
from .rounds import RunContext, run_rounds
from .schedule import train_round
from .stops import StopFlag
from .trainer import Job, Lane, StepSpec, Trained


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
        self.writer = AsyncWriter()
        try:
            run, self.global_state, self.seconds_before = _open_run(
                p, model, method, eval_data, probe, info, self.writer, faults, device, log,
                {"stacked": 1, "parallel_clients": plan.lanes, "cuda_graphs": plan.capture, **(extra or {})})
        except BaseException:
            self.writer.close()  # pending checkpoint writes finish; the error in flight is the one to report
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
            return (yield from run_rounds(self.ctx, self.global_state))
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


def _open_run(p: Prepared, model, method: Method, eval_data: EvalData, probe, info: dict, writer: AsyncWriter,
              faults: Faults, device, log, provenance: dict) -> tuple[RunDir, dict, float]:
    """The run folder created with round 0 evaluated (and probed), or reopened at its last
    complete round (``_resume``, recording ``provenance``: the resolved lanes and graphs, not
    the options' "auto", as a fresh run records them); the global state and the training
    seconds of the starts before this one."""
    cfg = p.config
    if p.start > 0:
        run = RunDir(p.path, writer, faults.point)
        seconds_before = float(run.meta.get("train_seconds") or 0.0)
        return run, _resume(run, p, model, method, device, log, provenance), seconds_before
    global_state = cpu_state(model.state_dict())
    run = RunDir.create(p.path.parent, p.path.name, cfg.to_json(), p.partition, global_state, info, writer,
                        faults.point)
    run.log({"event": "round", "round": 0, **method.evaluate(model, global_state, eval_data)})
    if probe is not None:
        model.load_state_dict(global_state)
        run.log({"event": "probe", "round": 0, **probe(model)})
        if cfg.probe_layers:
            run.log({"event": "probe_layers", "round": 0, "model": "global", **probe.layers(model)})
    return run, global_state, 0.0


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
