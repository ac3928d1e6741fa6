"""``train --workers N`` (N > 1): the runs ``service.begin`` prepared and checked, trained at
once on the local pool of worker processes (``sweep.service.execute``), each run the same
bytes as ``train`` alone would store (each worker trains a whole run, as ``train`` does); a
bar by round with an ETA on a terminal, a line as each run ends, the summary as ``train``."""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import click

from ..errors import CollapseLabError


def check_pool(workers: int | None, log_to) -> None:
    """What the pool cannot do, refused before anything is prepared."""
    if workers is not None and workers < 1:
        raise CollapseLabError(f"--workers {workers}: give 1 or more training processes")
    if workers and workers > 1 and log_to:
        raise CollapseLabError("--log writes each round from the process that trains it; with --workers > 1 use "
                               "collapse-lab export tensorboard after the runs, or --workers 1")


def train_pool(prepared, store, workers: int, time_limit: str | None) -> tuple[list[dict], list[str]]:
    """Train the prepared runs on ``workers`` processes; (summaries, diverged run names).
    ``backends.SweepInterrupted`` (Ctrl-C, SIGTERM) propagates once the runs under way stopped."""
    from ..store import RunDir, lock
    from ..sweep import service

    todo = [p for p in prepared if p.action in ("train", "resume")]
    for p in todo:
        if p.action == "train" and p.path.exists():  # --overwrite: what it replaces was said; the pool starts afresh
            shutil.rmtree(p.path)
        lock.release(p.path)  # the workers take each run's lock as they start it
    say = (lambda m: click.echo(m, err=True))
    from ..store.paths import sweep_logs

    say(f"train: {len(todo)} run(s) on {min(workers, len(todo))} worker processes (logs in {sweep_logs(store)})")
    t0 = time.time()

    def report(ev: dict) -> None:
        if ev["event"] == "end":
            say(f"{ev['run']}: {ev['status']} ({time.time() - t0:.0f} s)")

    results = service.execute([[p.config] for p in todo], store, "local", workers, report, time_limit)
    summaries, diverged = [], []
    for p, res in zip(todo, sorted(results, key=lambda r: [q.path.name for q in todo].index(r["run"])
                                   if r["run"] in [q.path.name for q in todo] else len(todo))):
        run = RunDir(p.path)
        status = run.meta.get("status") if run.exists() else res["status"]
        acc = [e["test_acc"] for e in run.metrics() if e.get("event") == "round"] if run.exists() else []
        summaries.append({"run": str(p.path), "status": status, **({"final_test_acc": acc[-1]} if acc else {}),
                          **({"error": res["error"]} if res.get("error") else {})})
        if status == "diverged":
            diverged.append(p.path.name)
    failed = [s for s in summaries if s["status"] not in ("complete", "diverged")]
    if failed:
        raise CollapseLabError(f"{len(failed)} run(s) did not finish ({failed[0]['run']}: "
                               f"{failed[0].get('error') or failed[0]['status']}); the same command with --resume "
                               "continues them")
    return summaries, diverged


def run_pool(ctx, prepared, report, params: dict) -> None:
    """``train --workers`` > 1 from the command: the summaries into ``report``; Ctrl-C or
    SIGTERM says how to continue and exits with the signal's status."""
    from ..signals import exit_status
    from ..sweep.backends import SweepInterrupted
    from ..timelimit import continue_command

    try:
        report.summaries, report.diverged = train_pool(prepared, Path(params["out"]), params["workers"],
                                                       params["time_limit"])
    except SweepInterrupted as e:
        click.echo(f"{e.signame}: the runs under way stopped at their last complete round. Continue with: "
                   f"{continue_command(resume=True)}", err=True)
        ctx.exit(exit_status(e.signame))
