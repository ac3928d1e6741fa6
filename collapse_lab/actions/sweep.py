"""Train a grid of runs (``collapse-lab sweep SPEC``): base options x grid axes x seeds
expanded through ``train``'s resolver, complete runs skipped, unfinished ones continued, the
rest trained on a local pool, on Ray or as one SLURM job each (docs/sweeps.md)."""
from __future__ import annotations

import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable


def _say(m: str) -> None:
    print(f"sweep: {m}", file=sys.stderr)


@dataclass
class Swept:
    """What ``sweep`` did: each unit's result, the seconds, the runs of the spec and those
    that trained; ``submitted`` (SLURM without ``wait``): the jobs and how to watch them."""
    results: list[dict]
    seconds: float
    total: int
    todo: int
    submitted: dict | None = None


def _grid(spec, store, backend, workers, address, cpus_per_run, gpus_per_run, stack, max_runs, wait, time_limit,
          data_root, slurm, say, dry_run=False, status=False):
    """SPEC's runs checked (options, SLURM settings: a typo is found here, not on the cluster)
    and cut into work units: (configs, SlurmOptions or None, precision left open, planned,
    work, busy)."""
    from ..data_root import check_data_root
    from ..runspec.backend import check_backend, check_sweep
    from ..sweep.prepare import spec_runs, units
    from ..sweep.slurm_flags import given_slurm

    check_sweep(backend, workers, address, cpus_per_run, gpus_per_run, stack, dry_run, max_runs, wait, status,
                time_limit)
    check_backend(backend, slurm or {})
    configs, loaded, auto = spec_runs(spec, Path(store), max_runs, None if data_root is None else
                                      check_data_root(data_root), lambda m: say(f"note: {m}"), say)
    options = given_slurm(slurm or {}, loaded.get("slurm"), time_limit if backend == "slurm" else None,
                          f"sweep spec {spec}") if backend == "slurm" or loaded.get("slurm") is not None else None
    if status:
        return configs, None, auto, None, None, None
    planned, work, alone, busy = units(configs, Path(store), backend, stack)  # checked before anything runs
    if alone:
        say(f"note: {len(alone)} run(s) train on their own, not stacked: {alone[0][1]} "
            f"({alone[0][0].run_name()}" + (", ..." if len(alone) > 1 else "") + ")")
    return configs, options if backend == "slurm" else None, auto, planned, work, busy


def sweep(spec: str, *, store: str | Path = "checkpoints", backend: str = "local", workers: int | None = None,
          address: str | None = None, cpus_per_run: int = 1, gpus_per_run: float = 0.0, stack: int = 1,
          max_runs: int = 10_000, wait: bool = False, time_limit: str | None = None, data_root: str | None = None,
          slurm: dict | None = None, watch: str | None = None, say: Callable[[str], None] = _say) -> Swept:
    """Train SPEC's runs into ``store``: on ``backend`` local (``workers`` processes, default
    the cores), ray (``address``, ``cpus_per_run``/``gpus_per_run`` a task) or slurm (one job
    a run; ``slurm``: the SLURM options as the flags name them, {"--slurm-time": "4h"}, over
    the spec's ``slurm:``; returns once submitted unless ``wait``; ``watch``: the command that
    shows their state, default ``collapse-lab sweep SPEC --store STORE --status``). ``stack``: runs trained together as one stacked model. Ctrl-C raises
    ``signals.SweepInterrupted`` once the runs under way stopped."""
    from ..plan.sweep_preview import check_before_training
    from ..runspec.expand import precision_line
    from ..sweep import service
    from ..sweep.backends import cores
    from ..sweep.outcome import Progress

    configs, options, auto, planned, work, busy = _grid(spec, store, backend, workers, address, cpus_per_run,
                                                        gpus_per_run, stack, max_runs, wait, time_limit, data_root,
                                                        slurm, say)
    n = workers or cores()
    check_before_training(planned, Path(store), work, n, backend, options, time_limit)
    # the first line after the checks (a refusal stays one line): the precision of the runs
    say(f"{len(configs) + len(busy)} run(s), precision {precision_line(configs + busy, auto=auto)}")
    for c in planned.gone:
        say(f"{c.run_name()} diverged earlier; not retrained (train --overwrite retrains it)")
    work = work + [[c] for c in busy]  # submit names each one's job and submits nothing for it; wait watches it
    todo = [p.config for p in planned.pending] + busy
    total = len(configs) + len(busy)
    if backend == "slurm" and not wait:
        from ..sweep.prepare import submitted
        from ..sweep.slurm import submit

        jobs = submit(work, Path(store), options, say) if work else []
        got, line = submitted(jobs, todo, total, watch or " ".join(
            shlex.quote(str(a)) for a in ["collapse-lab", "sweep", spec, "--store", store, "--status"]))
        say(line)
        return Swept([], 0.0, total, len(todo), got)
    t0 = time.time()
    results = service.execute(work, Path(store), backend, n, Progress(len(todo), n if backend == "local" else 1, say),
                              time_limit, address, cpus_per_run, gpus_per_run, slurm=options, say=say)
    return Swept(results, round(time.time() - t0, 2), total, len(todo))


def sweep_preview(spec: str, *, store: str | Path = "checkpoints", backend: str = "local", workers: int | None = None,
                  cpus_per_run: int = 1, stack: int = 1, max_runs: int = 10_000, data_root: str | None = None,
                  slurm: dict | None = None, pilot_s: float | None = None,
                  say: Callable[[str], None] = _say) -> dict:
    """``sweep --dry-run``: every run of SPEC with its status, the disk and the time estimate
    (``plan.sweep_preview``; ``pilot_s``: seconds of a measured pilot instead of the table)."""
    from ..plan.sweep_preview import preview
    from ..sweep.backends import cores

    configs, _, _, planned, _, busy = _grid(spec, store, backend, workers, None, cpus_per_run, 0.0, stack, max_runs,
                                            False, None, data_root, slurm, say, dry_run=True)
    n = workers or cores()
    return preview(planned, configs + busy, Path(store), n if backend == "local" else max(1, cores() // cpus_per_run),
                   pilot_s, workers)


def sweep_status(spec: str, *, store: str | Path = "checkpoints", max_runs: int = 10_000,
                 data_root: str | None = None, say: Callable[[str], None] = _say) -> list[dict]:
    """``sweep --status``: each run of SPEC, its state in the store and, for a sweep submitted
    to SLURM, its job id, SLURM state and requeues."""
    from ..sweep.status import status_rows

    configs = _grid(spec, store, "local", None, None, 1, 0.0, 1, max_runs, False, None, data_root, None, say,
                    status=True)[0]
    return status_rows(configs, Path(store))
