"""Everything before training: config -> data set -> partition -> run folder.

``prepare`` checks what can be checked without training (data files, names, partition
feasibility, run-directory conflicts, the disk) and writes nothing; ``engine.train`` then
runs the rounds.
"""
from __future__ import annotations

import dataclasses
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .. import augment as augmentation
from ..config import RunConfig
from ..data import Dataset, load_dataset
from ..errors import CollapseLabError
from ..partition import PARTITIONS, Partition
from ..regularizers import resolve_options as resolve_reg_options
from ..store import RunDir, parse_keep_local
from . import fast as fastpath
from .local import num_batches
from .methods import METHODS, build_run_model
from .seeds import PURPOSE_INIT, PURPOSE_PARTITION, PURPOSE_SAMPLE, seed_for


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
