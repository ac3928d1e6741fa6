"""Training the runs the catalogue's entries lack, through the sweep engine: the data
checked first, runs another collapse-lab process trains waited for, the timing runs last and
alone. Interrupts (``signals.SweepInterrupted``) reach the caller."""
from __future__ import annotations

import time
from pathlib import Path

from .busy import held_by, lost_the_lock, raced, trained_elsewhere, wait_for
from .planning import missing_data


def train_missing(configs, store: Path, backend: str, workers: int | None, stack: int, address, say,
                  drop_checkpoints: bool = False, time_limit: str | None = None, slurm=None,
                  on_complete=None) -> list[dict]:
    """Train (or finish) the runs not complete in the store through the sweep engine;
    returns the failures. Diverged runs are left alone (their figure says so). Runs tagged
    ``timing`` (the timing tables) train last, one at a time on all the cores, unstacked:
    their ``train_seconds`` is what a round costs. ``time_limit``: runs stop by it
    (``timelimit``); theirs are ``time-limit`` outcomes. ``slurm``: the jobs' options
    (``sweep.slurm_options.SlurmOptions``) with ``backend`` "slurm". ``on_complete(run path)``: called
    as each run this command trains completes (the ladder keeps its evidence then)."""
    timed = [c for c in configs if c.tag == "timing"]
    rest = [c for c in configs if c.tag != "timing"]
    failed = train_runs(rest, store, backend, workers, stack, address, say, drop_checkpoints, time_limit, slurm,
                        on_complete)
    if any(f["status"] == "time-limit" for f in failed):
        return failed + [{"run": c.run_name(), "status": "time-limit", "error": "not started before the time limit"}
                         for c in timed]
    return failed + train_runs(timed, store, backend, 1, 1, address, say, drop_checkpoints, time_limit, slurm,
                               on_complete)


def train_runs(configs, store: Path, backend: str, workers: int | None, stack: int, address, say,
               drop_checkpoints: bool = False, time_limit: str | None = None, slurm=None,
               on_complete=None) -> list[dict]:
    """One pass of ``train_missing`` over ``configs``: their failures, each run another
    process trained meanwhile read as it left it."""
    from ..sweep import backends, service

    refused, configs = missing_data(configs, say)
    busy = []
    if backend == "slurm":  # runs a SLURM job is training: watched, not refused for their lock
        from ..sweep.slurm import split_busy

        configs, busy = split_busy(store, configs)
    configs, elsewhere = trained_elsewhere(store, configs)
    if elsewhere:
        say(f"{len(elsewhere)} run(s) are being trained by another collapse-lab process "
            f"({held_by(store, elsewhere[0])}); this command waits for them, then reads them")
    p = service.plan(configs, store, each=True, say=say)
    refused += p.refused
    if not p.pending and not busy:
        return refused + wait_for(store, elsewhere, say)
    todo = [q.config for q in p.pending]
    from ..plan.estimate import check_job_time, check_time_limit

    if backend == "slurm":  # --time-limit: each job's training time
        from ..sweep.slurm import check_cluster

        check_job_time(slurm, todo)
        check_cluster(slurm)
    else:
        check_time_limit(time_limit, todo)
    work, alone = service.work_units(p, stack)
    work, todo = work + [[c] for c in busy], todo + busy  # submit names their jobs; wait watches them
    if stack > 1 and alone:  # said, not silent: why fewer runs share a unit than --stack allows
        why = sorted({r for _, r in alone})
        say(f"{len(alone)} run(s) cannot stack and train alone: {'; '.join(why[:3])}" + (" ..." if len(why) > 3 else ""))
    n = workers or backends.cores()
    service.check(p, store, work, n, smoke_ok=True, drop_checkpoints=drop_checkpoints)  # figures/tables checked the smoke mark
    say(f"training {len(todo)} run(s) in {len(work)} unit(s) on {backend} "
        + {"local": f"({n} workers", "ray": "(Ray workers", "slurm": "(one SLURM job each"}[backend] + f", --stack {stack})")
    report = _reporter(len(todo), store, say, drop_checkpoints, on_complete)
    results = service.execute(work, store, backend, n, report, time_limit, address, slurm=slurm, say=say)
    taken = lost_the_lock(results, todo)  # another command took a run between planning and training
    if taken:
        say(f"{len(taken)} run(s) were taken by another collapse-lab process as this one started them; waiting for them")
    lost = {c.run_name() for c in taken}
    return (refused + [r for r in results if r["status"] not in ("complete", "skipped") and r["run"] not in lost]
            + wait_for(store, elsewhere + taken, say))


def _reporter(total: int, store: Path, say, drop_checkpoints: bool, on_complete):
    """The training's event callback: a line as each run ends (``k/total runs trained``), its
    checkpoints dropped where the caller reads metrics only, ``on_complete`` for a complete run."""
    state = {"done": 0, "t0": time.time()}

    def report(ev: dict) -> None:
        if ev["event"] != "end":
            return
        if drop_checkpoints and ev["status"] == "complete":  # tables --smoke: metrics are what a table reads
            from ..store import RunDir

            RunDir(store / Path(ev["run"]).name).drop_checkpoints("tables --smoke")
        state["done"] += 1
        status, why = ev["status"], f": {ev['error']}" if ev.get("error") and ev["status"] != "complete" else ""
        if raced(ev):  # not this command's failure: it waits for the other process below
            status, why = "taken by another collapse-lab process as this one started it", "; waited for"
        say(f"{state['done']}/{total} runs trained ({ev['run']}: {status}{why}, {time.time() - state['t0']:.0f} s)")
        if on_complete is not None and ev["status"] == "complete":
            on_complete(ev["run"])
    return report
