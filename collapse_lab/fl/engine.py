"""The round loop: config -> data set -> partition -> clients -> server rounds -> run store.

``prepare`` checks everything that can be checked without training (data files, names,
partition feasibility, run-directory conflicts) and writes nothing; ``train`` then runs
the rounds and writes the store.
"""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from ..config import RunConfig
from ..data import Dataset, load_dataset
from .. import faults
from ..errors import CollapseLabError
from ..io import AsyncWriter, load_state
from .. import augment as augmentation
from . import fast as fastpath
from . import graphed
from ..partition import PARTITIONS, Partition
from ..regularizers import build_regularizer
from ..regularizers import resolve_options as resolve_reg_options
from ..store import RunDir, parse_keep_local
from .evaluate import evaluate
from .local import cpu_state, num_batches, train_client
from .methods import METHODS, ClientResult, EvalData, build_run_model
from .seeds import PURPOSE_AUGMENT, PURPOSE_BATCHES, PURPOSE_INIT, PURPOSE_PARTITION, PURPOSE_SAMPLE, seed_for


def resolve_device(spec: str) -> torch.device:
    if spec == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if spec.startswith("cuda") and not torch.cuda.is_available():
        raise CollapseLabError(f"--device {spec}: no CUDA device here; use --device cpu or auto")
    try:
        return torch.device(spec)
    except RuntimeError:
        raise CollapseLabError(f"--device {spec!r} is not a device; use auto, cpu, cuda or cuda:N") from None


def make_partition(cfg: RunConfig, ds: Dataset) -> Partition:
    rng = np.random.default_rng(seed_for(cfg.seed, PURPOSE_PARTITION))
    labels = ds.train_y.numpy()
    return PARTITIONS.get(cfg.partition)(
        labels, ds.num_classes, cfg.clients, rng, alpha=cfg.alpha, min_size=cfg.min_size,
        classes_per_client=cfg.classes_per_client,
        domains=None if ds.train_domain is None else ds.train_domain.numpy())


def clients_per_round(cfg: RunConfig) -> int:
    return min(cfg.clients, max(1, int(round(cfg.sample_fraction * cfg.clients))))


def sample_clients(cfg: RunConfig, r: int) -> list[int]:
    """The clients taking part in round r, drawn from the run's seed and r alone."""
    m = clients_per_round(cfg)
    if m >= cfg.clients:
        return list(range(cfg.clients))
    rng = np.random.default_rng(seed_for(cfg.seed, PURPOSE_SAMPLE, r))
    return sorted(int(k) for k in rng.choice(cfg.clients, size=m, replace=False))


def init_model(cfg: RunConfig, ds: Dataset) -> torch.nn.Module:
    """The round-0 model: the architecture plus the method's additions (MOON's projection
    head, FedETF's fixed classifier), from the run's seed."""
    torch.manual_seed(seed_for(cfg.seed, PURPOSE_INIT))
    return build_run_model(cfg, ds.num_classes, ds.input_shape)


def resolve_options(cfg: RunConfig, num_classes: int) -> RunConfig:
    """Fill in the method's and the regularizer's defaults, the data set's augmentation and
    the device's precision (idempotent)."""
    return dataclasses.replace(
        cfg, method_options=METHODS.get(cfg.method).resolve_options(dict(cfg.method_options), cfg),
        reg_options=resolve_reg_options(cfg.reg, dict(cfg.reg_options), num_classes),
        augment=augmentation.resolve(cfg.augment, cfg.dataset),
        precision=fastpath.resolve_precision(cfg.precision, resolve_device(cfg.device)))


@dataclass
class Prepared:
    config: RunConfig
    dataset: Dataset
    partition: Partition
    path: Path
    action: str  # "train" or "skip" (already complete with the same configuration)
    notes: tuple[str, ...] = ()  # things the user should know (e.g. a method that reduces to FedAvg here)
    state_bytes: int = 0  # one checkpoint of the model
    start: int = 0  # the last complete round a resumed run continues from (0 for a new run)


def check_config(cfg: RunConfig) -> None:
    if cfg.clients < 1:
        raise CollapseLabError(f"--clients must be >= 1 (got {cfg.clients})")
    if not 0 < cfg.sample_fraction <= 1:
        raise CollapseLabError(f"--sample-fraction must be in (0, 1] (got {cfg.sample_fraction})")
    for name, v, lo in (("--rounds", cfg.rounds, 1), ("--local-epochs", cfg.local_epochs, 1),
                        ("--batch-size", cfg.batch_size, 1), ("--min-size", cfg.min_size, 0)):
        if v < lo:
            raise CollapseLabError(f"{name} must be >= {lo} (got {v})")
    if not cfg.lr > 0:
        raise CollapseLabError(f"--lr must be > 0 (got {cfg.lr})")
    if cfg.momentum < 0 or cfg.weight_decay < 0 or cfg.beta < 0:
        raise CollapseLabError("--momentum, --weight-decay and --beta must be >= 0")
    if cfg.decorr_norm not in ("paper", "official"):
        raise CollapseLabError(f"--decorr-norm {cfg.decorr_norm!r}: use paper or official")
    METHODS.get(cfg.method).resolve_options(dict(cfg.method_options), cfg)
    resolve_reg_options(cfg.reg, dict(cfg.reg_options))
    from ..models import MODELS

    MODELS.get(cfg.model)
    PARTITIONS.get(cfg.partition)
    parse_keep_local(cfg.keep_local)
    resolve_device(cfg.device)
    augmentation.resolve(cfg.augment, cfg.dataset)
    fastpath.resolve_precision(cfg.precision, resolve_device(cfg.device))
    fastpath.check_compile(cfg.compile)
    fastpath.resolve_lanes(cfg, resolve_device(cfg.device), clients_per_round(cfg))


def prepare(configs: list[RunConfig], out: Path, overwrite: bool = False, resume: bool = False) -> list[Prepared]:
    """Validate every run before any is trained; raises CollapseLabError on bad input.

    An existing folder with the same configuration is skipped when complete; when
    unfinished (a crash, a kill, Ctrl-C) it is continued with ``resume`` and started over
    with ``overwrite``; without either that is an error (nothing is lost silently)."""
    cache: dict[tuple, Dataset] = {}
    prepared, names = [], set()
    for cfg in configs:
        check_config(dataclasses.replace(cfg, clients=cfg.clients or 1))
        key = (cfg.dataset, cfg.data_root, cfg.image_size, tuple(sorted(cfg.dataset_options.items())))
        if key not in cache:
            cache[key] = load_dataset(cfg.dataset, data_root=cfg.data_root, download=cfg.download, image_size=cfg.image_size,
                                      **cfg.dataset_options)
        ds = cache[key]
        cfg = resolve_options(cfg, ds.num_classes)
        if cfg.partition == "domain" and cfg.clients == 0:
            cfg = dataclasses.replace(cfg, clients=max(len(ds.domains), 1))
        if cfg.clients > len(ds.train_y):
            raise CollapseLabError(f"--clients {cfg.clients} is more than the {len(ds.train_y)} training samples of {cfg.dataset}; use fewer clients")
        if cfg.augment != "none" and len(ds.input_shape) != 3:
            raise CollapseLabError(f"--augment {cfg.augment}: {cfg.dataset} samples have shape {ds.input_shape}, not "
                                   "images (C, H, W); use --augment none")
        model = init_model(cfg, ds)  # a model that cannot take this input fails here
        if model.feature_dim < 1:
            raise CollapseLabError(f"model {cfg.model} has no representation")
        notes = tuple(METHODS.get(cfg.method).notes(model, cfg))
        part = make_partition(cfg, ds)
        name = cfg.run_name()
        if name in names:
            raise CollapseLabError(f"two runs would share the folder {name}; give different --alpha/--seed values or a --tag")
        names.add(name)
        path = Path(out) / name
        action, start = "train", 0
        if path.exists():
            if not (path / "run.json").is_file():
                raise CollapseLabError(f"{path} exists but is not a collapse-lab run; move it away or choose another --out")
            existing = RunDir(path)
            try:
                old = existing.config.identity()
            except (ValueError, TypeError, KeyError):
                raise CollapseLabError(f"{path}/run.json is unreadable; move the folder away or choose another --out") from None
            if old != cfg.identity():
                diff = sorted(k for k in set(old) | set(cfg.identity()) if old.get(k) != cfg.identity().get(k))
                raise CollapseLabError(
                    f"{path} holds a run with a different configuration (differs in: {', '.join(diff)}); use another --out or --tag, or delete that folder")
            meta = existing.meta
            if meta.get("status") == "complete" and not overwrite:
                action = "skip"
            elif meta.get("status") != "complete" and not overwrite:
                done = int(meta.get("rounds_complete", 0))
                if not resume:
                    raise CollapseLabError(
                        f"{path} holds an unfinished run ({done} of {cfg.rounds} rounds complete); add --resume to "
                        "continue it or --overwrite to start it over")
                if meta.get("partition_hash") != part.content_hash():
                    raise CollapseLabError(
                        f"{path}: the partition drawn now (sha256 {part.content_hash()[:12]}) differs from the stored one "
                        f"({str(meta.get('partition_hash'))[:12]}); the data set files changed, so the run cannot be "
                        "resumed; use --overwrite to start over")
                action, start = "resume", done
        state_bytes = sum(v.numel() * v.element_size() for v in model.state_dict().values())
        prepared.append(Prepared(cfg, ds, part, path, action, notes, state_bytes, start))
    return prepared


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
                 "local_seconds": round(local_s, 3), "aggregate_seconds": round(t_eval - t_server, 3),
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


def estimate_bytes(p: Prepared, keep_spec: str | None = None) -> int:
    """Checkpoint volume a run will still write: one global model per round, the client
    models --keep-local retains, and the method's state (``Method.server_copies`` /
    ``client_copies`` model-sized copies per round)."""
    cfg = p.config
    mode, n = parse_keep_local(keep_spec or cfg.keep_local)
    start = p.start
    rounds = list(range(start + 1, cfg.rounds + 1))
    per_round = clients_per_round(cfg)
    if mode == "all":
        kept_rounds = len(rounds)
    elif mode == "every":
        kept_rounds = sum(1 for r in rounds if r % n == 0 or r == cfg.rounds)
    else:  # last / none: one round's worth exists at a time
        kept_rounds = 1
    cls = METHODS.get(cfg.method)
    # per-client method state follows the client files; last/none briefly hold two rounds
    client_state_rounds = kept_rounds if mode in ("all", "every") else min(len(rounds), 2)
    copies = (len(rounds) + (1 if start == 0 else 0)            # global models (+ round 0)
              + kept_rounds * per_round                         # client models
              + len(rounds) * cls.server_copies                 # server method state
              + client_state_rounds * cfg.clients * cls.client_copies)  # per-client method state
    return int(copies * p.state_bytes)


def check_disk(prepared: list[Prepared], out: Path) -> dict:
    """Compare the checkpoint volume of the runs to be trained with the free space of
    ``out``; raise CollapseLabError with a --keep-local setting that fits, if one does."""
    import shutil

    todo = [p for p in prepared if p.action in ("train", "resume")]
    need = sum(estimate_bytes(p) for p in todo)
    probe = Path(out)
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    info = {"estimate_bytes": need, "free_bytes": free}
    if need <= free:
        return info
    gb = lambda b: f"{b / 1e9:.2f} GB"  # noqa: E731
    fits = None
    for spec in ("every:10", "every:5", "last", "none"):
        alt = sum(estimate_bytes(p, spec) for p in todo)
        if alt <= free:
            fits = (spec, alt)
            break
    hint = (f"--keep-local {fits[0]} would need about {gb(fits[1])}" if fits else
            "even --keep-local none does not fit; free some space or choose another --out")
    raise CollapseLabError(f"the runs would write about {gb(need)} of checkpoints to {out} but only {gb(free)} is free; "
                           f"{hint}")


def total_steps(p: Prepared) -> int:
    """Local SGD steps of the whole run (for the progress bar)."""
    cfg = p.config
    total = 0
    for r in range(p.start + 1, cfg.rounds + 1):
        for k in sample_clients(cfg, r):
            total += num_batches(int(p.partition.sizes[k]), cfg.batch_size) * cfg.local_epochs
    return total


def _cpu_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return cpu_state(model.state_dict())
