"""What a set of runs will cost before any GPU hour is booked (``figures/tables/sweep
--dry-run``): runs, checkpoint volume, and compute time per device class.

Volume is exact: every checkpoint is the model's state in float32 (shapes from building
the model on PyTorch's meta device, no memory), round 0 and every round's global model,
and the client checkpoints ``--keep-local`` keeps (the method's own state is not counted).

Time is an estimate from the project's measurements (docs/fast-path.md), scaled by forward
FLOPs per image (counted by ``torch.utils.flop_counter`` on the meta device):

- ``H100``: MobileNetV2 on CIFAR-10, 24,116 training images/s (``bench --workload
  paper-cifar10``, bf16, 5 lanes): the project's one GPU figure. Other models are scaled by
  their FLOPs against MobileNetV2's; large models use a GPU better than MobileNetV2's
  depthwise convolutions do, so their estimate errs long.
- ``cpu-2core``: this project's 2-core CPU, fp32: the cnn at 3,608 and MobileNetV2 at 137.3
  training images/s (``bench``), and the CIFAR-10 runs of the cpu preset and the ladder
  (docs/scale.md). A measured model gets its own rate (at the input nearest in FLOPs); any
  other is scaled from the measured model nearest in FLOPs. FLOP counts leave out
  BatchNorm's passes over the activations: ``cnn-bn`` has the cnn's FLOPs but trains at 0.75
  of its speed side by side on the same settings (2 rounds, 2 at once, idle: 48.6 s against
  36.6 s), and the ladder's runs of it took 1.6 x the cnn-scaled estimate; hence its own figure.

A round's work is ``local_epochs`` passes over the participating clients' data plus one
forward pass over the test set (counted as a third of a training image).
"""
from __future__ import annotations

import math
from functools import lru_cache

from ..config import RunConfig, clients_per_round
from ..errors import CollapseLabError
from ..data import SMOKE_SAMPLES, SMOKE_TEST
from ..store import keeps_global, parse_keep_global, parse_keep_local
from ..training.disk import human_bytes

# (model, its forward MFLOP per image at the measured input, training images/s, where measured)
MEASURED = {
    "H100": [("mobilenetv2", (3, 32, 32), 24_116.0, "docs/fast-path.md: bench --workload paper-cifar10, H100, bf16")],
    "cpu-2core": [("cnn", (1, 28, 28), 3_608.0, "docs/fast-path.md: bench, 2 cores, fp32"),
                  ("mobilenetv2", (3, 32, 32), 137.3, "docs/fast-path.md: bench, 2 cores, fp32"),
                  # the cpu preset's CIFAR-10 runs (issue 27): 206,667 images a run in 103 s (cnn) and
                  # 722 s (ResNet-20) on each of 2 workers of 1 thread; the machine does twice that
                  ("cnn", (3, 32, 32), 4_013.0, "docs/catalogue.md: the cpu preset's runs, 2 workers"),
                  ("resnet20", (3, 32, 32), 572.5, "docs/catalogue.md: the cpu preset's runs, 2 workers"),
                  # the ladder's n300-e10-bn-lr0.01 rung (issue 48): 18 runs of 306,667 images in 2,180 s,
                  # 2 workers of 1 thread, the machine otherwise idle (the FLOP-scaled cnn figure gave 1,376 s)
                  ("cnn-bn", (3, 32, 32), 2_532.0, "docs/scale.md: the n300-e10-bn-lr0.01 rung's runs, 2 workers")],
}

# Official sizes (train, test, classes, input shape) of the data sets the paper preset reads,
# for a plan made where the data are not: the data set's own papers/archives.
SIZES = {
    "cifar10": (50_000, 10_000, 10, (3, 32, 32)), "cifar100": (50_000, 10_000, 100, (3, 32, 32)),
    "tinyimagenet": (100_000, 10_000, 200, (3, 64, 64)), "stl10": (5_000, 8_000, 10, (3, 96, 96)),
    "mnist": (60_000, 10_000, 10, (1, 28, 28)), "digits": (1_437, 360, 10, (1, 8, 8)),
    # LEAF FEMNIST: 805,263 samples of 3,550 writers, split 90/10 per writer
    "femnist": (724_737, 80_526, 62, (1, 28, 28)),
    # the domain sets, split 80/20 per domain by the loaders, resized to 64 x 64
    "pacs": (7_993, 1_998, 7, (3, 64, 64)), "office-home": (12_470, 3_118, 65, (3, 64, 64)),
    "office-caltech10": (2_026, 507, 10, (3, 64, 64)), "ham10000": (8_012, 2_003, 7, (3, 64, 64)),
}


@lru_cache(maxsize=None)
def model_facts(model: str, num_classes: int, shape: tuple) -> tuple[int, float]:
    """(state bytes in float32, forward MFLOP per image) of a model, built on the meta device."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from ..models import build_model

    with torch.device("meta"):
        m = build_model(model, num_classes, shape).eval()
        x = torch.empty(2, *shape)
    with FlopCounterMode(display=False) as fc:
        m(x)
    size = sum(t.numel() * (4 if t.is_floating_point() else t.element_size()) for t in m.state_dict().values())
    return size, fc.get_total_flops() / 2 / 1e6


def data_facts(cfg: RunConfig) -> tuple[int, int, int, tuple] | None:
    """(train, test, classes, input shape) of a run's data: read from the data when they are
    here, else the official sizes (``SIZES``); None when neither is known."""
    from ..data import dataset_of
    from ..errors import CollapseLabError

    try:
        ds = dataset_of(cfg)
        return len(ds.train_y), len(ds.test_y), ds.num_classes, tuple(ds.input_shape)
    except CollapseLabError:
        pass
    known = SIZES.get(cfg.dataset)
    if known is None:
        return None
    train, test, classes, shape = known
    classes = int(cfg.dataset_options.get("num_classes", classes))
    caps = cfg.dataset_options  # the generic per-class caps (the cpu preset's) apply to the official sizes too
    train = min(train, int(caps.get("max_train_per_class") or train) * classes)
    test = min(test, int(caps.get("max_test_per_class") or test) * classes)
    if cfg.image_size and len(shape) == 3:
        shape = (shape[0], cfg.image_size, cfg.image_size)
    return train, test, classes, shape


def rate(device: str, mflop: float, model: str | None = None) -> tuple[float, str]:
    """Training images/s of a model of ``mflop`` forward MFLOP per image on a device class,
    scaled by FLOPs from the same model's measurement where there is one, else from the
    measured model nearest in FLOPs; and where that figure comes from."""
    anchors = []
    for name, shape, images_s, source in MEASURED[device]:
        anchors.append((name, model_facts(name, 10, shape)[1], images_s, f"{name} {images_s:,.0f} img/s, {source}"))
    own = [a for a in anchors if a[0] == model]
    _, flops, images_s, source = min(own or anchors, key=lambda a: abs(math.log(a[1] / max(mflop, 1e-9))))
    return images_s * flops / max(mflop, 1e-9), source


def kept_checkpoints(cfg: RunConfig) -> int:
    """Checkpoint files a finished run holds: the global models ``keep_global`` keeps
    (every round's and round 0's by default) and the client checkpoints ``keep_local`` keeps."""
    mode, n = parse_keep_local(cfg.keep_local)
    per_round = clients_per_round(cfg)
    rounds_kept = {"all": cfg.rounds, "last": 1, "none": 0}.get(mode, cfg.rounds // max(n, 1) + 1)
    keep_g = parse_keep_global(cfg.keep_global)
    globals_kept = sum(keeps_global(keep_g, q, cfg.rounds, cfg.rounds) for q in range(cfg.rounds + 1))
    return globals_kept + per_round * min(rounds_kept, cfg.rounds)


def estimate(configs: list[RunConfig]) -> dict:
    """The plan of a set of runs: per model and in total, runs, checkpoint volume and hours
    per device class; runs whose data size is unknown are counted and named."""
    per_model: dict[str, dict] = {}
    unknown = []
    for cfg in configs:
        facts = data_facts(cfg)
        if facts is None:
            unknown.append(cfg.run_name())
            continue
        train, test, classes, shape = facts
        size, mflop = model_facts(cfg.model, classes, shape)
        if cfg.smoke:  # one step on each participant's first samples, one evaluation of the small test set
            images = cfg.rounds * (clients_per_round(cfg) * SMOKE_SAMPLES + min(test, SMOKE_TEST) / 3)
        else:
            images = cfg.rounds * (cfg.local_epochs * train * clients_per_round(cfg) / max(cfg.clients, 1) + test / 3)
        row = per_model.setdefault(cfg.model, {"model": cfg.model, "runs": 0, "bytes": 0, "images": 0.0,
                                               "mflop_per_image": mflop, "hours": {}})
        row["runs"] += 1
        row["bytes"] += size * kept_checkpoints(cfg)
        row["images"] += images
    sources = {}
    for row in per_model.values():
        for device in MEASURED:
            r, source = rate(device, row["mflop_per_image"], row["model"])
            row["hours"][device] = row["images"] / r / 3600
            sources.setdefault(device, set()).add(source)
    total = {"runs": sum(r["runs"] for r in per_model.values()), "bytes": sum(r["bytes"] for r in per_model.values()),
             "hours": {d: sum(r["hours"][d] for r in per_model.values()) for d in MEASURED}}
    return {"total": total, "models": sorted(per_model.values(), key=lambda r: -r["bytes"]),
            "sources": {d: sorted(s) for d, s in sources.items()}, "unknown_size": unknown}


def lines(plan: dict, label: str) -> list[str]:
    """The plan as text: a total line, one line per model, where the rates come from."""
    t = plan["total"]
    here = plan.get("here_hours")
    out = [f"{label}: {t['runs']} runs, checkpoints {human_bytes(t['bytes'])}; "
           + ", ".join(f"{d} {h:,.1f} h" for d, h in t["hours"].items())
           + ("" if "here_hours" not in plan else "; this machine now, by the pilot: "
              + (f"{hours_range(*here)} of training steps" if here else "not measured"))]
    out.append(f"  {'model':<14} {'runs':>5} {'MFLOP/img':>10} {'checkpoints':>12} "
               + " ".join(f"{d + ' h':>12}" for d in MEASURED))
    for r in plan["models"]:
        out.append(f"  {r['model']:<14} {r['runs']:>5} {r['mflop_per_image']:>10,.1f} {human_bytes(r['bytes']):>12} "
                   + " ".join(f"{r['hours'][d]:>12,.2f}" for d in MEASURED))
    for d, s in plan["sources"].items():
        out.append(f"  {d} rates scaled by FLOPs from: {'; '.join(s)}")
    if "here_hours" not in plan:
        out.append("  (measured on idle machines: other work on the cores stretches them; --dry-run --pilot 10 times "
                   "this machine now)")
    if plan["unknown_size"]:
        out.append(f"  {len(plan['unknown_size'])} run(s) not estimated (data set size unknown here): "
                   + ", ".join(plan["unknown_size"][:3]) + (" ..." if len(plan["unknown_size"]) > 3 else ""))
    return out


def hours_range(fast_h: float, slow_h: float) -> str:
    """A range of hours in the unit that reads: seconds, minutes or hours."""
    if slow_h < 1 / 60:
        return f"{fast_h * 3600:,.0f}-{slow_h * 3600:,.0f} s"
    if slow_h < 2:
        return f"{fast_h * 60:,.1f}-{slow_h * 60:,.1f} min"
    return f"{fast_h:,.1f}-{slow_h:,.1f} h"


def device_class(device: str) -> str:
    """The measured device class nearest a run's device: the H100 figure for any GPU (the
    project's one GPU measurement), the 2-core CPU figures for a CPU."""
    return "cpu-2core" if device == "cpu" else "H100"


def round_seconds(cfg: RunConfig, device: str) -> tuple[float, str] | None:
    """One round of ``cfg`` on ``device`` (cpu, cuda), estimated as ``estimate`` does, and
    where the rate comes from; None when the data set's size is unknown. FLOP-scaled rates
    leave out per-batch overheads, so for small models this is a lower bound."""
    import dataclasses

    plan = estimate([dataclasses.replace(cfg, rounds=1)])
    if plan["unknown_size"]:
        return None
    d = device_class(device)
    return plan["total"]["hours"][d] * 3600, f"the project's {d} measurements (docs/fast-path.md)"


def check_time_limit(limit: str | None, configs) -> None:
    """Refuse, before anything trains, a ``--time-limit`` shorter than the first run's first
    round (``round_seconds`` on the run's device)."""
    if limit is None or not configs:
        return
    from ..devices import resolve_device
    from ..timelimit import check_first_round

    cfg = configs[0]
    est = round_seconds(cfg, resolve_device(cfg.device).type)
    if est is not None:
        check_first_round(limit, est[0], cfg.run_name(), est[1])


def check_job_time(o, configs) -> None:
    """SLURM (``o``: ``sweep.slurm_options.SlurmOptions``): refuse a job time whose training time is shorter than one round of the first run
    (estimated as ``--time-limit`` is: ``plan.estimate.round_seconds``): every job would
    stop before its first round and be requeued for nothing."""
    if not configs:
        return
    from ..timelimit import human

    cfg = configs[0]
    est = round_seconds(cfg, "cuda" if o.gpus else "cpu")
    if est is not None and o.train_seconds() < est[0]:
        what = f"--time-limit {o.train_limit}" if o.train_limit else f"--slurm-time {o.time}"
        raise CollapseLabError(f"{what} leaves {human(o.train_seconds())} of training per job, less than one round of "
                               f"{cfg.run_name()} (about {human(est[0])}, estimated from {est[1]}); give a longer "
                               + ("--time-limit" if o.train_limit else "--slurm-time"))
