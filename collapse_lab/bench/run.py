"""``collapse-lab bench``: the fast path against the reference loop, in one process, on
the same machine, data, partition, batches and initial model.

Both train FedAvg rounds on CIFAR-shaped synthetic data (speed does not depend on pixel
values) and write per-round client and global checkpoints; each round ends with one
evaluation of the global model. The fast path is the engine itself (``training.engine.train``);
the reference round (``bench.reference_round``) is the independent oracle. Rounds after
``warmup`` are timed (the first one pays for compilation and kernel selection).
"""
from __future__ import annotations

import dataclasses
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from ..config import RunConfig
from ..data import Dataset
from ..data.cifar import STATS
from ..devices import resolve_device
from ..errors import CollapseLabError
from ..training.engine import train
from ..partition import make_partition
from ..runspec.resolve import resolve_runs, with_data
from ..store import run_path
from ..training.prepare import Prepared, init_model
from ..store import RunDir
from .reference_round import reference_rounds

PRESETS = {
    # The paper's round scaled down 1/78 for 2 CPU cores: 640 training and 128 test images
    # (CIFAR's 5:1), 10 clients, alpha 0.5, 10 local epochs, so local training and the
    # official evaluations weigh what they weigh in the paper's round. No warm-up round:
    # on CPU nothing is compiled by default.
    "cpu": dict(images=640, test_images=128, rounds=1, warmup=0, reference_epochs=None),
    # FedDecorr Sec. 5.1 / journal Table 6: CIFAR-10, 10 clients, alpha 0.5, 10 local epochs,
    # batch 64, SGD lr 0.01 momentum 0.9, weight decay 1e-5. The reference loop runs one of
    # the 10 epochs per client (its rate does not change between epochs; a full reference
    # round would take most of the time limit of a benchmark job).
    "paper-cifar10": dict(images=50000, test_images=10000, rounds=1, warmup=1, reference_epochs=1),
}
# Both presets train the paper preset's CIFAR-10 run (resolve.resolve_runs: 10 local
# epochs, batch 64, lr 0.01, momentum 0.9, weight decay 1e-5, crop+flip) of this model.
RUN = dict(dataset="cifar10", model="mobilenetv2", alpha=["0.5"], clients=10, min_size=10)
BENCH_FIELDS = ("images", "test_images", "rounds", "warmup", "reference_epochs", "workers", "reference",
                "official_evals", "keep_memory", "repeats")


@dataclass
class Settings:
    """What the bench measures: ``run``, the fast path's run configuration (a
    ``RunConfig`` like any other, its ``rounds`` = warm-up + timed rounds), and the bench's
    own settings."""

    run: RunConfig
    preset: str = "cpu"
    images: int = 640
    test_images: int = 128
    rounds: int = 1  # timed rounds
    warmup: int = 0  # untimed first rounds of every fast-path run (CUDA graphs are captured there)
    reference_epochs: int | None = None  # None: the same as the run's local epochs
    workers: int | None = None  # reference DataLoader workers; None: 6 on CUDA (the official code), 0 on CPU
    reference: bool = True
    official_evals: bool = True  # the reference evaluates as the official code does (see reference_round)
    keep_memory: bool = True  # fast path keeps freed host memory (fast.keep_host_memory); process-wide
    repeats: int = 3  # alternating reference/fast measurements (median and spread reported)

    @property
    def model(self) -> str:
        return self.run.model


def settings_for(preset: str, **overrides) -> Settings:
    """The preset's settings; ``overrides`` (None = the preset's) are bench fields or train
    options (``model``, ``device``, ``clients``, ``local_epochs``, ``augment``, ...),
    the latter resolved and checked like ``collapse-lab train``'s."""
    if preset not in PRESETS:
        raise CollapseLabError(f"--workload {preset!r}: choose one of {', '.join(PRESETS)}, released-parity")
    given = {k: v for k, v in overrides.items() if v is not None}
    bench = {**PRESETS[preset], **{k: given.pop(k) for k in list(given) if k in BENCH_FIELDS}}
    (cfg,) = resolve_runs({**RUN, **given, "rounds": bench["warmup"] + bench["rounds"]}, data="if-present")
    return Settings(cfg, preset, **bench)


def synthetic_cifar(n_train: int, n_test: int, seed: int) -> Dataset:
    """CIFAR-10-shaped uint8 images and labels, uniform at random."""
    g = torch.Generator().manual_seed(seed)
    mean, std = STATS["cifar10"]
    return Dataset("synthetic-cifar10", torch.randint(0, 256, (n_train, 3, 32, 32), generator=g, dtype=torch.uint8),
                   torch.randint(0, 10, (n_train,), generator=g), torch.randint(0, 256, (n_test, 3, 32, 32), generator=g,
                   dtype=torch.uint8), torch.randint(0, 10, (n_test,), generator=g), num_classes=10, scale=255.0,
                   mean=mean, std=std)


def run_config(s: Settings) -> RunConfig:
    return with_data(s.run, 10, input_shape=(3, 32, 32))


def fast_rounds(cfg: RunConfig, ds: Dataset, part, out: Path, keep_memory: bool = True, log=None) -> list[dict]:
    """Train with the engine (the fast path); per round: seconds, images, steps."""
    p = Prepared(cfg, ds, part, run_path(out, cfg), "train")
    train(p, keep_memory=keep_memory, log=log)
    events = RunDir(p.path).metrics()
    rounds, prev = [], 0.0
    for e in (e for e in events if e.get("event") == "round" and e["round"] > 0):
        local = [x for x in events if x.get("event") == "local_epoch" and x["round"] == e["round"]]
        rounds.append({"round": e["round"], "seconds": e["seconds"] - prev, "images": sum(x["samples"] for x in local),
                       "steps": sum(x["steps"] for x in local), "test_acc": e["test_acc"],
                       "write_wait_seconds": e.get("write_wait_seconds", 0.0),
                       **{k: e[k] for k in ("local_seconds", "prepare_seconds", "aggregate_seconds", "eval_seconds") if k in e}})
        prev = e["seconds"]
    return rounds


def extraction(cfg: RunConfig, ds: Dataset, state: dict, device: torch.device) -> dict:
    """Features of the test set in float64 (inference mode, batches of 1024) and their
    float64 covariance spectrum, timed."""
    from ..analysis.features.extract import extract_features
    from ..spectra.functional import spectrum

    model = init_model(cfg, ds)
    model.load_state_dict(state)
    _sync(device)
    t0 = time.perf_counter()
    z = extract_features(model, ds.test_x, ds.to_float, torch.float64, device, 1024)
    t1 = time.perf_counter()
    sv, _ = spectrum(z)
    t2 = time.perf_counter()
    return {"images": len(z), "extract_seconds": t1 - t0, "spectrum_seconds": t2 - t1, "total_seconds": t2 - t0,
            "images_per_second": len(z) / max(t1 - t0, 1e-9), "feature_dim": int(z.shape[1]), "top_sv": float(sv[0])}


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def _summary(rounds: list[dict], warmup: int) -> dict:
    timed = rounds[warmup:] or rounds
    secs = sum(r["seconds"] for r in timed)
    imgs = sum(r["images"] for r in timed)
    return {"rounds_timed": len(timed), "seconds_per_round": secs / len(timed), "images_per_second": imgs / secs,
            "images_per_round": imgs / len(timed), "steps_per_round": sum(r["steps"] for r in timed) / len(timed),
            "first_round_seconds": rounds[0]["seconds"],
            "first_round_prepare_seconds": rounds[0].get("prepare_seconds"), "rounds": rounds}


def spread(values: list[float]) -> dict:
    """Median, min and max of repeated measurements (the spread tells noise from a change)."""
    v = sorted(values)
    n = len(v)
    med = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    return {"median": med, "min": v[0], "max": v[-1], "values": list(values)}


def _warm_up(s: Settings, cfg, ds, part, tmp: Path, device, workers: int, say) -> None:
    """Both sides warmed up the same way: one untimed round of one local epoch each."""
    if s.reference:
        say(f"{s.model}: reference loop warm-up (one untimed round of one local epoch)")
        reference_rounds(dataclasses.replace(cfg, rounds=1, local_epochs=1), ds, part, tmp / "rwarm", device,
                         workers, 1, official_evals=False)
    say(f"{s.model}: fast path warm-up (one untimed round of one local epoch)")
    fast_rounds(dataclasses.replace(cfg, rounds=1, local_epochs=1, tag="warmup"), ds, part, tmp / "warm",
                s.keep_memory)


def _features(s: Settings, cfg, meta: dict) -> dict:
    """What the fast path used, as the timed run recorded it."""
    return {"data_on_device": True, "batched_augmentation": cfg.augment != "none",
            "channels_last": cfg.channels_last, "precision": cfg.precision, "compile": cfg.compile,
            "cuda_graphs": bool(meta.get("cuda_graphs")), "parallel_clients": int(meta.get("parallel_clients", 1)),
            "keep_host_memory": s.keep_memory, "async_checkpoint_writes": True, "evaluations_per_round": 1}


def bench(s: Settings, progress=None) -> dict:
    """Warm both sides up the same way (one untimed round of one local epoch each), then
    measure them in alternation, reference then fast path, ``s.repeats`` times: a machine
    whose speed drifts moves both sides of a pair together. Reports each side's median
    repeat, and the median and spread of images/s and of the per-pair ratio."""
    device = resolve_device(s.run.device)
    workers = s.workers if s.workers is not None else (6 if device.type == "cuda" else 0)
    cfg = run_config(s)
    ds = synthetic_cifar(s.images, s.test_images, cfg.seed)
    part = make_partition(cfg, ds)
    say = progress or (lambda msg: None)
    out: dict = {"model": s.model, "preset": s.preset, "device": str(device), "device_name": _device_name(device),
                 "settings": {**dataclasses.asdict(s), "run": s.run.to_json()}, "resolved": {"augment": cfg.augment, "precision": cfg.precision,
                                                                            "reference_precision": "fp32"},
                 "partition_sizes": part.sizes.tolist(), "torch_threads": torch.get_num_threads(),
                 "repeats": s.repeats}
    epochs = s.reference_epochs or cfg.local_epochs
    rcfg = dataclasses.replace(cfg, local_epochs=epochs, rounds=s.rounds)
    refs, fasts, meta = [], [], {}
    with tempfile.TemporaryDirectory(prefix="collapse-lab-bench-") as tmp:
        tmp = Path(tmp)
        _warm_up(s, cfg, ds, part, tmp, device, workers, say)
        for i in range(s.repeats):
            if s.reference:
                say(f"{s.model} [{i + 1}/{s.repeats}]: reference loop, {rcfg.rounds} round(s) of {epochs} local "
                    f"epoch(s), {workers} loader workers")
                refs.append(_reference_repeat(s, cfg, rcfg, ds, part, tmp / f"reference{i}", device, workers, say))
            say(f"{s.model} [{i + 1}/{s.repeats}]: fast path, {cfg.rounds} round(s) ({s.warmup} warm-up)")
            t0 = time.perf_counter()
            fast = fast_rounds(cfg, ds, part, tmp / f"fast{i}", s.keep_memory,
                               log=lambda m: say(f"  {m} ({time.perf_counter() - t0:.1f} s)"))
            fasts.append(_summary(fast, s.warmup))
            if i == 0:
                meta = RunDir(tmp / "fast0" / cfg.run_name()).meta
                state = RunDir(tmp / "fast0" / cfg.run_name()).load_global(cfg.rounds)
            if s.reference:
                say(f"  ratio {fasts[-1]['images_per_second'] / refs[-1]['images_per_second']:.2f}x "
                    f"({fasts[-1]['images_per_second']:.1f} vs {refs[-1]['images_per_second']:.1f} images/s)")
        out["fast"] = _median_repeat(fasts)
        out["fast"]["features"] = _features(s, cfg, meta)
        out["extraction"] = extraction(cfg, ds, state, device)
        if s.reference:
            out.update(_ratios(fasts, refs))
    return out


def _reference_repeat(s: Settings, cfg, rcfg, ds, part, folder: Path, device, workers: int, say) -> dict:
    """One timed repeat of the reference loop (its local training extrapolated to the fast
    path's epochs where it ran fewer)."""
    epochs = rcfg.local_epochs
    refr = reference_rounds(rcfg, ds, part, folder, device, workers, epochs, s.official_evals, say)
    summary = _summary(refr, 0)
    summary["train_images_per_second"] = sum(r["images"] for r in refr) / sum(r["train_seconds"] for r in refr)
    summary.update(local_epochs=epochs, workers=workers, official_evals=s.official_evals)
    if epochs != cfg.local_epochs:
        _extrapolate(summary, refr, cfg.local_epochs / epochs)
    return summary


def _ratios(fasts: list[dict], refs: list[dict]) -> dict:
    """The reference's median repeat and the per-pair speed ratios (fast path over reference)."""
    out = {"reference": _median_repeat(refs)}
    ratios = [f["images_per_second"] / r["images_per_second"] for f, r in zip(fasts, refs)]
    train_ratios = [f["images_per_second"] / r["train_images_per_second"] for f, r in zip(fasts, refs)]
    out["ratio"] = spread(ratios)
    out["ratio_vs_reference_training_only"] = spread(train_ratios)
    out["speedup_images_per_second"] = out["ratio"]["median"]
    # conservative: the fast path's whole round against the reference's local training alone
    out["speedup_vs_reference_training_only"] = out["ratio_vs_reference_training_only"]["median"]
    return out


def _median_repeat(summaries: list[dict]) -> dict:
    """The repeat with the median images/s, plus the spread over all repeats."""
    order = sorted(range(len(summaries)), key=lambda i: summaries[i]["images_per_second"])
    out = dict(summaries[order[(len(order) - 1) // 2]])
    out["images_per_second_spread"] = spread([x["images_per_second"] for x in summaries])
    out["seconds_per_round_spread"] = spread([x["seconds_per_round"] for x in summaries])
    return out


def _extrapolate(summary: dict, timed: list[dict], factor: float) -> None:
    """The reference ran fewer local epochs than the fast path: scale its local training
    (time and images) to the full round and keep the once-per-round parts (evaluations,
    aggregation, writes) as measured, so per-round figures compare like with like. The
    measured values stay under ``measured_*``."""
    n = len(timed)
    train_s = sum(r["train_seconds"] for r in timed) / n
    other_s = sum(r["seconds"] for r in timed) / n - train_s
    images = sum(r["images"] for r in timed) / n
    summary.update(measured_seconds_per_round=summary["seconds_per_round"],
                   measured_images_per_second=summary["images_per_second"],
                   measured_images_per_round=summary["images_per_round"],
                   seconds_per_round=train_s * factor + other_s, images_per_round=images * factor,
                   extrapolated_epochs_factor=factor)
    summary["images_per_second"] = summary["images_per_round"] / summary["seconds_per_round"]


def _device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    import platform

    return f"{platform.processor() or platform.machine()} CPU, {torch.get_num_threads()} threads"
