"""A sweep before it trains (``sweep --dry-run`` and the checks before training): each run's
state in the store, the checkpoints' disk and the time the pending runs take, from this
store's finished runs of the sweep's model and from the project's measurements."""
from __future__ import annotations

from pathlib import Path

from ..sweep.outcome import duration_text


def status_of(p) -> str:
    """A prepared run's state in the store, from what ``prepare`` decided to do with it."""
    return {"skip": "complete", "train": "missing"}.get(p.action, f"partial {p.start} of {p.config.rounds}")


def seconds_per_step(store: Path, dataset: str, model: str) -> float | None:
    """From the store's finished runs of this data set and model (train_seconds / steps)."""
    from ..store import find_runs

    rates = []
    for run in find_runs(store):
        m = run.meta
        if m.get("status") == "complete" and m.get("dataset") == dataset and m.get("model") == model \
                and m.get("train_seconds"):
            steps = sum(e.get("steps", 0) for e in run.metrics() if e.get("event") == "local_epoch")
            if steps:
                rates.append(m["train_seconds"] / steps)
    return sum(rates) / len(rates) if rates else None


def eta_seconds(planned, configs, store: Path, lanes: int) -> float | None:
    """The time the pending runs take on ``lanes`` at once, from this store's finished runs of
    the sweep's model (None: none to time)."""
    from ..training.prepare import total_steps

    rate = seconds_per_step(store, configs[0].dataset, configs[0].model) if configs else None
    steps = sum(total_steps(p) for p in planned.pending)
    return rate * steps / lanes if rate else None


def preview(planned, configs, store: Path, lanes: int, pilot_s: float | None = None, workers: int | None = None) -> dict:
    """Every run with its status, the runs to train, the checkpoints' bytes, the store's ETA
    and the project's per-device estimate (``plan.estimate``); with ``pilot_s``, this
    machine's time now as a range (``plan.pilot``, as every dry-run's)."""
    from ..training.disk import estimate_bytes
    from .estimate import estimate
    from .pilot import hours_here, pilot

    todo = [p.config for p in planned.pending]
    plan = estimate(todo)
    if pilot_s is not None and todo:
        plan["here_hours"] = hours_here(plan, pilot(todo, pilot_s, workers))
    status = {p.config.run_name(): status_of(p) for p in planned.prepared}
    status |= {c.run_name(): "diverged" for c in planned.gone}
    rows = [{"run": c.run_name(), "status": status.get(c.run_name(), "training (a SLURM job)"), "rounds": c.rounds}
            for c in configs]
    return {"runs": rows, "to_train": len(todo), "estimate_bytes": sum(estimate_bytes(p) for p in planned.pending),
            "estimate_seconds": eta_seconds(planned, configs, store, lanes), "plan": plan}


def preview_lines(p: dict) -> list[str]:
    """``preview`` as text: a line per run, the totals, the per-device estimate."""
    from .estimate import lines

    n, todo, eta = len(p["runs"]), p["to_train"], p["estimate_seconds"]
    return ([f"{r['run']:<64} {r['status']}" for r in p["runs"]]
            + [f"{n} run(s): {n - todo} complete or diverged, {todo} to train; about "
               f"{p['estimate_bytes'] / 1e6:.1f} MB of checkpoints, about {duration_text(eta)} "
               + ("(from this store's finished runs)" if eta is not None else "(no finished run of this model to time)")]
            + list(lines(p["plan"], "to train")))


def check_before_training(planned, store: Path, work, lanes: int, backend: str, slurm, time_limit) -> None:
    """The time limit (or the SLURM job's time and the cluster) against the runs to train,
    and the service's checks of the units; one line each, before anything trains."""
    from ..sweep import service
    from .estimate import check_job_time, check_time_limit

    todo = [p.config for p in planned.pending]
    if backend == "slurm":
        from ..sweep.slurm import check_cluster

        check_job_time(slurm, todo)
        check_cluster(slurm)
    else:
        check_time_limit(time_limit, todo)
    service.check(planned, store, work, lanes)
