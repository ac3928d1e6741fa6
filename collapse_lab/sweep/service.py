"""The one place runs are run: ``train``, ``sweep``, ``figures``, ``tables`` and the API say
what they want and format the events.

On a pool (``sweep``, ``figures``, ``tables``):
``plan`` surveys every run in this process (names, data, conflicts with what the store
holds: ``training.prepare`` without drawing partitions; each run is prepared in full once,
in the worker that trains it) and sorts them into what trains, what is complete, what
diverged earlier (left alone: ``train --overwrite`` retrains it) and what is refused;
``check`` refuses, before anything trains, a store that cannot be written and a disk that
cannot hold the checkpoints; ``execute`` cuts the
runs into units (stacked where they can stack) and trains them on the local pool or Ray,
calling ``report`` with each event of ``backends`` ({"event": "start"|"end", "run", ...}).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..errors import CollapseLabError
from ..store.paths import sweep_logs
from ..timelimit import deadline
from . import backends


def diverged(store: Path, cfg) -> bool:
    """Whether the run's folder holds a run that diverged (left alone; ``prepare`` would
    refuse to resume it)."""
    from ..store import RunDir, run_path

    path = run_path(store, cfg)
    try:
        return RunDir(path).exists() and RunDir(path).meta.get("status") == "diverged"
    except CollapseLabError:
        return False  # prepare names the unreadable run.json


@dataclass
class SweepPlan:
    """The runs a sweep was asked for, as the store holds them: prepared to train or skip, diverged
    earlier, or refused."""
    prepared: list  # training.prepare.Prepared of every run that is not diverged, in order
    gone: list = field(default_factory=list)  # configurations whose run diverged earlier
    refused: list = field(default_factory=list)  # {"run", "status": "failed", "error"}: not trained

    @property
    def pending(self) -> list:
        """What trains: new runs and unfinished ones."""
        return [p for p in self.prepared if p.action != "skip"]


def plan(configs, store: Path, each: bool = False, say: Callable[[str], None] | None = None) -> SweepPlan:
    """Survey the runs (continuing unfinished ones; partitions are drawn where they train). ``each``: a run whose options are
    refused is reported (to ``say``) and the others go on (the catalogue); otherwise the
    first refusal is the command's error (a user's sweep)."""
    from ..training.prepare import prepare

    gone = [c for c in configs if diverged(store, c)]
    live = [c for c in configs if c not in gone]
    try:
        return SweepPlan(prepare(live, store, resume=True, partition=False), gone)
    except CollapseLabError:
        if not each:
            raise
        out = SweepPlan([], gone)  # one run's options are refused: the others still train
        for c in live:
            try:
                out.prepared += prepare([c], store, resume=True, partition=False)
            except CollapseLabError as e:
                out.refused.append({"run": c.run_name(), "status": "failed", "error": str(e)})
                if say is not None:
                    say(f"{c.run_name()}: not trained: {e}")
        return out


def work_units(p: SweepPlan, stack: int) -> tuple[list[list], list]:
    """The pending runs in units (``backends.units``) and the runs that cannot stack with
    the reason of the first (``training.stackable.prepared_reason``)."""
    from ..training.stackable import prepared_reason

    pending = p.pending
    reasons = {q.config.run_name(): prepared_reason(q) for q in pending} if stack > 1 else {}
    todo = [q.config for q in pending]
    work = backends.units(todo, stack, lambda c: reasons[c.run_name()])
    alone = [(c, reasons[c.run_name()]) for c in todo if reasons.get(c.run_name())]
    return work, alone


def check(p: SweepPlan, store: Path, work: list[list], workers: int, smoke_ok: bool = False,
          drop_checkpoints: bool = False) -> None:
    """Before anything trains: the store can be written and the disk holds the checkpoints
    (with ``drop_checkpoints``, each run's files go once it is trained, so only the
    ``workers`` largest units in flight must fit). The command checks ``--time-limit``
    against a round of its first run (``plan.estimate.check_time_limit``)."""
    from ..store.paths import check_store_for_writing
    from ..training.disk import check_disk, estimate_bytes

    pending = p.pending
    if not pending:
        return
    check_store_for_writing(store, "--store", smoke_ok=smoke_ok)
    if drop_checkpoints:
        by_name = {q.config.run_name(): q for q in pending}
        sizes = sorted(((sum(estimate_bytes(by_name[c.run_name()]) for c in u), u) for u in work), key=lambda t: t[0])
        check_disk([by_name[c.run_name()] for _, u in sizes[-workers:] for c in u], store)
    else:
        check_disk(pending, store)


def execute(work: list[list], store: Path, backend: str, workers: int, report: Callable[[dict], None],
            time_limit: str | None = None, address: str | None = None, cpus_per_run: int = 1,
            gpus_per_run: float = 0.0, slurm=None, say: Callable[[str], None] = lambda m: None) -> list[dict]:
    """Train the units; every run's outcome ({"run", "status", ...}). Ctrl-C or SIGTERM
    raises ``signals.SweepInterrupted`` once the runs under way have stopped (on SLURM: the
    jobs go on; the same command waits for them again). ``slurm``: the SlurmOptions
    (``time_limit`` is then each job's training time, in them)."""
    if backend == "slurm":
        from . import slurm as cluster

        try:
            return cluster.wait(cluster.submit(work, store, slurm, say), store, slurm, report, say)
        except KeyboardInterrupt as e:
            from ..signals import SweepInterrupted, signame_of

            raise SweepInterrupted(signame_of(e)) from None
    from .progress import RoundProgress

    until = deadline(time_limit)
    with RoundProgress(store, [c for unit in work for c in unit]):  # by round, with an ETA, on a terminal
        if backend == "local":
            return backends.run_local(work, store, min(workers, max(1, len(work))), report, sweep_logs(store), until)
        return backends.run_ray(work, store, address, cpus_per_run, gpus_per_run, report, until)


# -- in this process, one run after another (``train``, the API) ----------------------------

def begin(configs, store, option: str = "--store", overwrite: bool = False, resume: bool = False,
          check_time: Callable[[list], None] | None = None) -> list:
    """Prepare the runs for training here: the store can be written (``option`` names it in
    the error), every run prepared (``training.prepare``), ``check_time`` (the command's
    ``--time-limit``) given the runs that train, the disk checked, and a lock taken on each
    of them (one writer per run), all before anything trains. Returns every Prepared."""
    from ..store.paths import check_store_for_writing
    from ..training.disk import check_disk
    from ..training.prepare import prepare, take_lock

    out = check_store_for_writing(store, option)
    prepared = prepare(configs, out, overwrite=overwrite, resume=resume)
    todo = [p for p in prepared if p.action in ("train", "resume")]
    if check_time is not None:
        check_time([p.config for p in todo])
    check_disk(prepared, out)
    for p in todo:
        take_lock(p)
    from ..faults import startup

    startup("prepared")  # a test's stop at this moment: the runs checked and locked, nothing trained
    return prepared


def train_here(prepared: list, on_step=None, log=None, stop=None,
               report: Callable[[dict], None] | None = None) -> None:
    """Train the runs ``begin`` prepared, one after another in this process; the locks are
    released at the end however it ends. Events to ``report``: {"event": "start",
    "prepared"}, {"event": "round", "prepared", "round"} as each round is stored, and
    {"event": "end", "prepared", "summary"}; a run that diverges ends with
    "event" "diverged", its summary (status, round, client, what) and the "error", and the
    others go on. ``training.stops.Interrupted`` (Ctrl-C, SIGTERM, the time limit)
    propagates after the current client."""
    from ..store import lock
    from ..training.engine import train as train_run
    from ..training.stops import Diverged

    report = report or (lambda ev: None)
    todo = [p for p in prepared if p.action in ("train", "resume")]
    try:
        for p in todo:
            report({"event": "start", "prepared": p})
            try:
                summary = train_run(p, on_step=on_step, log=log, stop=stop,
                                    on_round=lambda r, p=p: report({"event": "round", "prepared": p, "round": r}))
            except Diverged as e:  # the other runs go on
                report({"event": "diverged", "prepared": p, "error": e, "summary": {
                    "run": str(p.path), "status": "diverged", "diverged_round": e.round, "client": e.client,
                    "what": e.what}})
                continue
            report({"event": "end", "prepared": p, "summary": summary})
    finally:
        for p in todo:
            lock.release(p.path)
