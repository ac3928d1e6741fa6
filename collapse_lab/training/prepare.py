"""Everything before training: config -> data set -> partition -> run folder.

``prepare`` checks what can be checked without training (data files, names, partition
feasibility, run-directory conflicts, the disk) and writes nothing; ``engine.train`` then
runs the rounds. A sweep's parent process only *surveys* its runs (``partition=False``:
names, folders, sizes, no partition drawn); each run is prepared where it trains.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import torch

from ..config import RunConfig, clients_per_round
from ..data import Dataset, dataset_of
from ..devices import resolve_device
from ..errors import CollapseLabError
from ..models import check_forward
from ..partition import Partition, make_partition
from ..seeds import PURPOSE_INIT, seed_for
from ..tensor_files import safetensors_problem
from ..store.paths import check_writable
from ..store import RunDir, lock, retention, package_versions, run_path
from ..store.run_dir import NewerFormatError
from . import fast as fastpath
from ..store.integrity import can_restart_after, first_damage
from .local import num_batches
from .sampling import sample_clients
from ..methods import METHODS, build_run_model


def init_model(cfg: RunConfig, ds: Dataset) -> torch.nn.Module:
    """The round-0 model: the architecture plus the method's additions (MOON's projection
    head, FedETF's fixed classifier), from the run's seed."""
    torch.manual_seed(seed_for(cfg.seed, PURPOSE_INIT))
    return build_run_model(cfg, ds.num_classes, ds.input_shape)


@dataclass
class Prepared:
    config: RunConfig
    dataset: Dataset
    partition: Partition | None  # None in a survey (``prepare(partition=False)``): drawn where the run trains
    path: Path
    action: str  # "train" or "skip" (already complete with the same configuration)
    notes: tuple[str, ...] = ()  # things the user should know (e.g. a method that reduces to FedAvg here)
    state_bytes: int = 0  # one checkpoint of the model
    start: int = 0  # the last complete round a resumed run continues from (0 for a new run)
    seen: str | None = None  # the run folder's state when checked (``folder_state``): a writer re-checks it under the lock
    plan: object = None  # the trainer plan (``fast.plan_trainer``): lanes, capture; made here once, the engine follows it

    def __post_init__(self) -> None:
        if self.plan is None:
            self.plan = fastpath.plan_trainer(self.config, resolve_device(self.config.device),
                                              clients_per_round(self.config))


def folder_state(path: Path) -> str | None:
    """What decided a run's action: the sha256 of its run.json (None: no folder). Another
    process that wrote the run between ``prepare`` and taking its lock changes it."""
    try:
        return RunDir(Path(path)).record_sha256()
    except OSError:
        return None if not Path(path).exists() else "unreadable"


CHANGED = "was changed by another process after this command checked it"  # take_lock's refusal


def take_lock(p: "Prepared") -> None:
    """Become the run's one writer (``store.lock``) and check that nobody changed the run
    since ``prepare`` decided what to do with it."""
    lock.acquire(p.path)
    if folder_state(p.path) != p.seen:
        lock.release(p.path)
        raise CollapseLabError(f"{p.path} {CHANGED}; run the command again")


def prepare(configs: list[RunConfig], out: Path, overwrite: bool = False, resume: bool = False,
            partition: bool = True) -> list[Prepared]:
    """Everything before training for configurations the resolver made final
    (``resolve.finalize``): the data set, the model, the partition, the run folder; raises
    CollapseLabError on a conflict with what the store holds.

    An existing folder with the same configuration is skipped when complete; when
    unfinished (a crash, a kill, Ctrl-C) it is continued with ``resume`` and started over
    with ``overwrite``; without either that is an error (nothing is lost silently).

    ``partition=False`` surveys: everything but the partition (a sweep's parent decides what
    trains and sizes the disk; the worker that trains a run prepares it fully, and only there
    are the partition's feasibility and a resumed run's stored partition checked)."""
    prepared, names = [], set()
    for cfg in configs:
        ds = dataset_of(cfg)
        model = init_model(cfg, ds)
        check_forward(cfg.model, model, ds.input_shape, ds.num_classes)  # an input the model cannot take fails here
        notes = tuple(METHODS.get(cfg.method).notes(model, cfg))
        plan = fastpath.plan_trainer(cfg, resolve_device(cfg.device), clients_per_round(cfg))
        notes += (plan.note,) if plan.note else ()  # the one plan of this run: the engine follows it
        part = make_partition(cfg, ds) if partition else None
        name = cfg.run_name()
        if name in names:
            raise CollapseLabError(f"two runs would share the folder {name}; give different --alpha/--seed values or a --tag")
        names.add(name)
        path = run_path(Path(out), cfg)
        seen = folder_state(path)
        action, start, notes = _existing(path, cfg, part, overwrite, resume, notes)
        if action != "skip" and path.is_dir():  # a run folder on a read-only mount: one line before any work
            check_writable(path, f"--store: the run folder {path}", "make it writable, or choose another --store")
        state_bytes = sum(v.numel() * v.element_size() for v in model.state_dict().values())
        prepared.append(Prepared(cfg, ds, part, path, action, notes, state_bytes, start, seen, plan))
    return prepared


def _existing(path: Path, cfg: RunConfig, part: Partition, overwrite: bool, resume: bool,
              notes: tuple) -> tuple[str, int, tuple]:
    """What to do with a run folder that may already exist: (action, start round, notes).

    The same configuration: skip when complete with at least ``cfg.rounds`` rounds;
    continue (``--resume``) when unfinished, or when complete with fewer rounds (the run is
    extended: a run of R rounds is the first R rounds of a longer one). Another
    configuration, or a diverged run: an error, or with ``--overwrite`` a retraining that
    says what it replaces."""
    if path.is_symlink():
        raise CollapseLabError(f"{path} is a symbolic link; collapse-lab writes only real run folders: move it away "
                               "or choose another --store")
    if not path.exists():
        return "train", 0, notes
    if not RunDir(path).exists():
        raise CollapseLabError(f"{path} exists but is not a collapse-lab run; move it away or choose another --store")
    if (who := lock.held_elsewhere(path)) is not None:
        raise CollapseLabError(f"{path} is being written by {who}; wait for it to finish or stop it, then run this again")
    existing = RunDir(path)
    try:
        old, meta = existing.config.identity(), existing.meta
    except NewerFormatError:
        raise  # a newer collapse-lab's run: upgrade to read it; never --overwrite it
    except CollapseLabError:
        if overwrite:
            return "train", 0, notes + (f"--overwrite replaces {path} (its run.json is unreadable)",)
        raise CollapseLabError(f"{path}/run.json is unreadable; move the folder away, or --overwrite it") from None
    new = cfg.identity()
    diff = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k) and k != "rounds")
    if overwrite:
        what = f"a run that differs in {', '.join(diff)}" if diff else f"a {meta.get('status', 'unfinished')} run"
        return "train", 0, notes + (f"--overwrite replaces {path} ({what})",)
    if diff:
        raise CollapseLabError(f"{path} holds a run with a different configuration (differs in: {', '.join(diff)}); "
                               "use another --store or --tag, or --overwrite to replace it")
    return _same_configuration(existing, cfg, part, meta, int(old.get("rounds", 0)), resume, notes)


def _same_configuration(existing: RunDir, cfg: RunConfig, part: Partition, meta: dict, had: int, resume: bool,
                        notes: tuple) -> tuple[str, int, tuple]:
    """A stored run of this configuration (``had`` rounds long): skipped when complete at
    ``cfg.rounds``, repaired or continued when damaged or unfinished, extended when shorter;
    a diverged one refused."""
    path = existing.path
    status, done = meta.get("status"), int(meta.get("rounds_complete", 0))
    if status == "diverged":
        d = meta.get("diverged", {})
        raise CollapseLabError(f"{path} diverged in round {d.get('round')} ({d.get('what')}); resuming would diverge "
                               "again: --overwrite retrains it (with a lower --lr or --beta)")
    if cfg.smoke and meta.get("checkpoints_dropped") and status == "complete" and had >= cfg.rounds:
        return "skip", 0, notes  # a smoke run whose files tables --smoke dropped: its metrics are what is read
    damage = _damage(existing, cfg, done)
    if damage is not None:
        return _repair(path, cfg, existing, part, meta, damage, resume, notes)
    if status == "complete" and had >= cfg.rounds:
        kept = retention.skip_note(path.name, meta, cfg.keep_global, cfg.keep_local)
        return "skip", 0, notes + ((kept,) if kept else ())
    _check_resumable(path, cfg, part, meta, resume)
    if had != cfg.rounds:
        notes = notes + (f"{path.name}: extended from {had} to {cfg.rounds} rounds",)
    kept = retention.change_note(path.name, meta, cfg.keep_global, cfg.keep_local, done)
    return "resume", done, notes + _version_note(path, meta) + ((kept,) if kept else ())


def _check_resumable(path: Path, cfg: RunConfig, part: Partition | None, meta: dict, resume: bool) -> None:
    """A stored run of this configuration that is not complete at ``cfg.rounds``: continued
    only with --resume, never past its length, and only with the partition it was drawn with."""
    status, done, had = meta.get("status"), int(meta.get("rounds_complete", 0)), int(meta.get("rounds", 0))
    if done > cfg.rounds:
        raise CollapseLabError(f"{path} already holds {done} rounds, more than --rounds {cfg.rounds}; analyse "
                               f"round {cfg.rounds} of it (--round {cfg.rounds}) or --overwrite it")
    if not resume:
        if status == "complete":
            raise CollapseLabError(f"{path} is complete with {had} rounds; add --resume to extend it to "
                                   f"{cfg.rounds} rounds, or --overwrite to start it over")
        raise CollapseLabError(f"{path} holds an unfinished run ({done} of {had} rounds complete); add --resume to "
                               "continue it or --overwrite to start it over")
    if part is not None and meta.get("partition_hash") != part.content_hash():
        raise CollapseLabError(
            f"{path}: the partition drawn now (sha256 {part.content_hash()[:12]}) differs from the stored one "
            f"({str(meta.get('partition_hash'))[:12]}); the data set files changed, so the run cannot be "
            "resumed; use --overwrite to start over")
    _rewrite_partition(path, part)


def _rewrite_partition(path: Path, part: Partition | None) -> None:
    """Before a resume, whose draw has run.json's partition hash: a damaged stored copy of the
    partition is rewritten whole from it, not left so."""
    stored = RunDir(path).partition_path
    if part is not None and stored.exists() and safetensors_problem(stored) is not None:
        part.save(stored)


def _version_note(path: Path, meta: dict) -> tuple[str, ...]:
    """A resumed run continues with the installed versions: bit-identity holds only with
    the ones it started with, so a difference is said."""
    old, now = meta.get("versions") or {}, package_versions()
    diff = [f"{k} {old[k]} -> {now[k]}" for k in sorted(now) if k in old and old[k] != now[k] and k != "python"]
    if not diff:
        return ()
    return (f"{path.name} was started with other versions ({', '.join(diff)}); the resumed rounds may not be "
            "bit-identical to an uninterrupted run",)


def _damage(run: RunDir, cfg: RunConfig, done: int) -> tuple[int, str] | None:
    # the files were written under the stored configuration's length and --keep-local
    stored = dataclasses.replace(cfg, rounds=int(run.meta.get("rounds", cfg.rounds)),
                                 keep_local=str(run.meta.get("keep_local", cfg.keep_local)),
                                 keep_global=str(run.meta.get("keep_global", "all")))
    return first_damage(run, lambda r: sample_clients(stored, r), done)


def _repair(path: Path, cfg: RunConfig, run: RunDir, part: Partition, meta: dict, damage: tuple[int, str],
            resume: bool, notes: tuple) -> tuple[str, int, tuple]:
    """A run with a missing or damaged file in round q: ``--resume`` retrains from round
    q - 1 (later rounds are recreated, bit-identical on the CPU) when that round holds what a
    resume reads; otherwise only ``--overwrite`` helps."""
    q, what = damage
    cls = METHODS.get(cfg.method)
    ok = q >= 1 and can_restart_after(run, q - 1, cls.client_copies > 0, cls.server_copies > 0)
    if not ok:
        raise CollapseLabError(f"{path}: {what}, and round {max(q - 1, 0)} lacks what a resume needs; "
                               "--overwrite retrains the run")
    if not resume:
        raise CollapseLabError(f"{path}: {what}; add --resume to recreate rounds {q}.."
                               f"{meta.get('rounds_complete')} from round {q - 1}, or --overwrite to retrain")
    if part is not None and meta.get("partition_hash") != part.content_hash():
        raise CollapseLabError(f"{path}: {what}, and the partition drawn now differs from the stored one (the data "
                               "set files changed); use --overwrite to start over")
    _rewrite_partition(path, part)
    return "resume", q - 1, notes + (f"{path.name}: {what}; rounds {q} on are trained again",)


def total_steps(p: Prepared) -> int:
    """Local SGD steps of the whole run (for the progress bar); in a survey (no partition)
    an estimate: every client of a round holding an equal share of the training set."""
    cfg = p.config
    if p.partition is None:
        share = len(p.dataset.train_y) / max(1, cfg.clients)
        per_round = clients_per_round(cfg) * num_batches(max(1, round(share)), cfg.batch_size) * cfg.local_epochs
        return per_round * (cfg.rounds - p.start)
    total = 0
    for r in range(p.start + 1, cfg.rounds + 1):
        for k in sample_clients(cfg, r):
            total += num_batches(int(p.partition.sizes[k]), cfg.batch_size) * cfg.local_epochs
    return total
