"""The round loop: prepared run -> clients -> server rounds -> run store.

``prepare`` (``fl.prepare``, re-exported here) checks everything that can be checked
without training and writes nothing; ``train`` then runs the rounds and writes the store.
"""
from __future__ import annotations

import contextlib
import copy
import time
from pathlib import Path
from typing import Callable

import torch

from .. import faults
from ..errors import CollapseLabError
from ..io import AsyncWriter, load_state
from ..regularizers import build_regularizer
from ..store import RunDir, parse_keep_local
from . import fast as fastpath
from . import graphed
from .evaluate import evaluate
from .local import cpu_state, num_batches, train_client  # noqa: F401 -- num_batches re-exported
from .methods import METHODS, ClientResult, EvalData
from .prepare import (  # noqa: F401 -- the preparation API, re-exported
    Prepared, check_config, check_disk, clients_per_round, estimate_bytes, init_model, make_partition, prepare,
    resolve_device, resolve_options, sample_clients, total_steps)
from .seeds import PURPOSE_AUGMENT, PURPOSE_BATCHES, seed_for


def train(p: Prepared, on_step: Callable[[], None] | None = None, log: Callable[[str], None] | None = None,
          keep_memory: bool = True) -> dict:
    """Run all rounds of one prepared run into its run directory; returns a summary.
    ``keep_memory``: let the process keep freed host memory for reuse (``fast.keep_host_memory``)."""
    cfg, ds, part = p.config, p.dataset, p.partition
    device = resolve_device(cfg.device)
    if keep_memory:
        fastpath.keep_host_memory()
    model, fast = fastpath.build(cfg, init_model(cfg, ds).to(device), len(ds.input_shape))
    # cudnn.benchmark stays off: a round has a dozen batch shapes (each client's last batch,
    # the evaluation's), and each new one would be timed for every convolution; cudnn's
    # heuristic choice needs no search (README, Fast path: what the H100 showed).
    x_train, y_train = ds.train_x.to(device), ds.train_y.to(device)
    x_test, y_test = ds.test_x.to(device), ds.test_y.to(device)
    client_idx = [torch.from_numpy(ix).to(device) for ix in part.client_indices]
    reg = build_regularizer(cfg.reg, normalization=cfg.decorr_norm, num_classes=ds.num_classes, **cfg.reg_options)
    method = METHODS.get(cfg.method)(cfg, model, cfg.clients)
    lanes = None
    n_lanes = fastpath.resolve_lanes(cfg, device, clients_per_round(cfg))
    if n_lanes:  # captured step programs, clients side by side (fl.graphed)
        spec = graphed.StepSpec(ds.to_float, cfg.lr, cfg.momentum, cfg.weight_decay, reg, cfg.beta, fast)
        lanes = [graphed.Lane(copy.deepcopy(model), spec, capture=device.type == "cuda") for _ in range(n_lanes)]
    eval_data = EvalData(x_test, y_test, ds.to_float, cfg.eval_batch_size,
                         None if ds.test_domain is None else ds.test_domain.to(device),
                         None if ds.train_domain is None else
                         [sorted(set(ds.train_domain[torch.from_numpy(ix)].tolist())) for ix in part.client_indices])

    extra = {"n_train": len(ds.train_y), "n_test": len(ds.test_y), "num_classes": ds.num_classes,
             "feature_dim": model.feature_dim, "client_sizes": part.sizes.tolist(), "device": str(device),
             "parallel_clients": n_lanes, "captured": bool(lanes) and device.type == "cuda"}
    global_state = _cpu_state(model)
    start = p.start
    if start == 0:
        run = RunDir.create(p.path.parent, p.path.name, cfg.to_json(), part, global_state, extra)
        ev = method.evaluate(model, global_state, eval_data)
        run.log({"event": "round", "round": 0, **ev})
    else:
        run = RunDir(p.path)
        run.discard_after(start)
        global_state = load_state(run.global_path(start), model)
        server, clients = run.load_method_state(start)
        try:
            method.load_state(server, clients)
        except (KeyError, RuntimeError, ValueError) as e:
            raise CollapseLabError(f"{run.method_path(start)}: the {cfg.method} state of round {start} is incomplete "
                                   f"({type(e).__name__}: {e}); use --overwrite to start the run over") from None
        run.update(status="running", device=str(device))
        if log:
            log(f"{p.path.name}: resuming after round {start}/{cfg.rounds}")
    t0 = time.time()
    run.writer = AsyncWriter()
    try:
        with fastpath.no_tf32() if cfg.precision == "fp32" else contextlib.nullcontext():
            ev = _rounds(p, run, model, fast, method, reg, eval_data, x_train, y_train, client_idx, global_state, start,
                         on_step, log, lanes)
    except BaseException:
        run.writer.close()  # pending checkpoint writes finish; the error in flight is the one to report
        raise
    run.writer.close()
    run.update(status="complete", finished=time.strftime("%Y-%m-%dT%H:%M:%S%z"), train_seconds=round(time.time() - t0, 2))
    return {"run": str(p.path), "status": "complete", "rounds": cfg.rounds, "final_test_acc": ev["test_acc"],
            "final_test_loss": ev["test_loss"], "seconds": round(time.time() - t0, 2)}


def _rounds(p, run, model, fast, method, reg, eval_data, x_train, y_train, client_idx, global_state, start, on_step,
            log, lanes=None) -> dict:
    """The rounds after ``start``; returns the last evaluation of the global model. With
    ``lanes`` the round's clients train together on captured step programs first; their
    results are then stored in client order, as the sequential loop stores them."""
    cfg, ds = p.config, p.dataset
    keep = parse_keep_local(cfg.keep_local)
    ev = None
    if start >= cfg.rounds:  # killed after its last round was stored: only the status is left
        ev = method.evaluate(model, global_state, eval_data)
    t0 = time.time()
    for r in range(start + 1, cfg.rounds + 1):
        busy0 = run.writer.busy_seconds
        participants = sample_clients(cfg, r)
        results = []
        t_local = time.time()
        prep0 = sum(lane.prepare_seconds for lane in lanes or ())
        trained = (None if lanes is None else
                   _train_lanes(cfg, r, participants, lanes, method, global_state, x_train, y_train, client_idx, on_step))
        local_s = time.time() - t_local  # with lanes: the whole round's local training
        last = None
        for k in participants:
            ix = client_idx[k]
            t_client = time.time()
            if trained is not None:
                if k not in trained:  # SIGINT/SIGTERM: clients not started are not stored
                    raise Interrupted(p.path, r, last, STOP.requested or "SIGINT")
                hist, state, steps = trained[k].history, trained[k].state, trained[k].steps
            else:
                hooks = method.client_start(k, r, model, global_state)
                gen = torch.Generator().manual_seed(seed_for(cfg.seed, PURPOSE_BATCHES, r, k))
                # Augmentation draws from its own stream, so the batch order is the same with
                # and without it, and a resumed run augments exactly as an uninterrupted one.
                fast.aug_generator = torch.Generator().manual_seed(seed_for(cfg.seed, PURPOSE_AUGMENT, r, k))
                hist = train_client(model, x_train[ix], y_train[ix], ds.to_float, epochs=cfg.local_epochs,
                                    batch_size=cfg.batch_size, lr=cfg.lr, momentum=cfg.momentum,
                                    weight_decay=cfg.weight_decay, reg=reg, beta=cfg.beta, generator=gen,
                                    hooks=hooks, on_step=_step_hook(on_step, r, k), fast=fast)
                state, steps = _cpu_state(model), sum(h["steps"] for h in hist)
                local_s += time.time() - t_client
            for h in hist:
                run.log({"event": "local_epoch", "round": r, "client": k, **h})
            if cfg.local_eval:  # optional (off by default): the client's model on the test set
                if trained is not None:
                    model.load_state_dict(state)
                run.log({"event": "local_eval", "round": r, "client": k,
                         **evaluate(model, eval_data.x, eval_data.y, eval_data.to_float, eval_data.batch_size)})
            run.save_client(r, k, state)
            result = ClientResult(k, state, len(ix), steps)
            method.client_end(k, r, model, result)
            results.append(result)
            faults.point(f"client:{r}:{k}")
            last = k
            if STOP.requested:
                raise Interrupted(p.path, r, k, STOP.requested)
        t_server = time.time()
        global_state = method.aggregate(r, global_state, results)
        run.save_global(r, global_state)
        run.save_method_state(r, method.server_state(), method.client_state())
        t_eval = time.time()
        ev = method.evaluate(model, global_state, eval_data)
        tw = time.time()
        run.flush()  # the checkpoints were written while the next clients trained
        run.log({"event": "round", "round": r, "clients": participants, "seconds": round(time.time() - t0, 3),
                 "local_seconds": round(local_s, 3),
                 **({"prepare_seconds": round(sum(lane.prepare_seconds for lane in lanes) - prep0, 3)} if lanes else {}),
                 "aggregate_seconds": round(t_eval - t_server, 3),
                 "eval_seconds": round(tw - t_eval, 3), "write_wait_seconds": round(time.time() - tw, 4),
                 "write_seconds": round(run.writer.busy_seconds - busy0, 4), **ev})
        # The round counts as complete only once all its files exist; pruning comes after,
        # so the state a resume needs is never deleted before a newer round is recorded.
        run.update(rounds_complete=r)
        run.prune_local(r, keep, cfg.rounds)
        if log:
            log(f"{p.path.name} round {r}/{cfg.rounds}: test acc {ev['test_acc']:.4f}")
    return ev


def _train_lanes(cfg, r, participants, lanes, method, global_state, x_train, y_train, client_idx, on_step):
    """The round's local training on the lanes (fl.graphed); client -> Trained."""
    device = x_train.device
    start_state = {n: v.to(device) for n, v in global_state.items()}  # once; replicas load it device to device
    jobs = []
    for k in participants:
        ix = client_idx[k]
        jobs.append(graphed.Job(
            k, x_train[ix], y_train[ix], torch.Generator().manual_seed(seed_for(cfg.seed, PURPOSE_BATCHES, r, k)),
            torch.Generator().manual_seed(seed_for(cfg.seed, PURPOSE_AUGMENT, r, k)),
            start=lambda m, k=k: method.client_start(k, r, m, start_state), on_step=_step_hook(on_step, r, k)))
    return graphed.train_round(lanes, jobs, epochs=cfg.local_epochs, batch_size=cfg.batch_size, beta=cfg.beta,
                               stop=lambda: STOP.requested is not None)


class _Stop:
    requested: str | None = None  # the signal's name once SIGINT/SIGTERM arrived


STOP = _Stop()


class Interrupted(Exception):
    """``client``: the last client stored in round ``round`` (None: none was)."""

    def __init__(self, path: Path, r: int, k: int | None, signame: str):
        super().__init__(f"{signame}: stopped {path.name} in round {r} after client {k}")
        self.path, self.round, self.client, self.signame = path, r, k, signame


def _step_hook(on_step, r: int, k: int):
    name = f"step:{r}:{k}"

    def hook():
        faults.point(name)
        if on_step is not None:
            on_step()

    return hook


def _cpu_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return cpu_state(model.state_dict())
