"""What runs inside a SLURM job of ``--backend slurm`` (``sweep.slurm``): one unit of a sweep,
trained as a ``sweep`` worker trains it (``worker.run_unit``), with the job's own time limit.

When the limit stops a run (every complete round kept), the job requeues itself with
``scontrol requeue`` (same job id; SLURM counts ``SLURM_RESTART_COUNT``) and the next start
continues from the last complete round, until the run is complete or ``max_requeues``
restarts were used. A diverged or failed run is never requeued. submitit's own
timeout signal (sent ``signal_delay_s`` before the end, should a round overrun the margin)
takes the same way out through ``checkpoint``.

What the job did is written to ``<store>/.slurm/runs/<run>.job-<job id>.json`` (one writer: the
job), read by ``sweep --status`` and by a sweep that waits.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


class UnitJob:
    """The callable submitit pickles: run configurations as JSON, nothing else."""

    def __init__(self, unit: list[dict], store: str, threads: int, train_seconds: float, max_requeues: int):
        self.unit, self.store, self.threads = unit, store, threads
        self.train_seconds, self.max_requeues = train_seconds, max_requeues

    def __call__(self) -> list[dict]:
        from ..timelimit import process_start
        from ..training.stops import StopFlag
        from .worker import run_unit, unit_name

        job, _ = job_ids()
        restarts = int(os.environ.get("SLURM_RESTART_COUNT", "0") or 0)
        names = [unit_name(c) for c in self.unit]
        stop = StopFlag(process_start() + self.train_seconds)

        def handler(signum, frame):  # scancel or preemption: finish the current client, keep every round
            stop.request(signal.Signals(signum).name)

        signal.signal(signal.SIGTERM, handler)
        before = {n: rounds_done(self.store, c) for n, c in zip(names, self.unit)}
        for n in names:
            note(self.store, n, job, {"event": "started", "host": socket.gethostname(), "restarts": restarts,
                                      "rounds_complete": before[n]})
        results = run_unit(self.unit, self.store, self.threads, log=lambda m: print(m, flush=True), stop=stop)
        late = [r for r in results if r["status"] == "time-limit"]
        after = {n: rounds_done(self.store, c) for n, c in zip(names, self.unit)}
        if late and not any(after.get(r["run"], 0) > before.get(r["run"], 0) for r in late):
            for r in late:  # requeued, it would stop in the same place again
                r["status"], r["error"] = "failed", (
                    f"the job's training time ({self.train_seconds:.0f} s from its start) ended before a round was "
                    f"complete ({r.get('error', 'time limit')}); give a longer --slurm-time or --time-limit")
            late = []
        why = f"the job's time limit stopped it in each of its {restarts + 1} start(s) (--max-requeues {self.max_requeues})"
        if late and stop.requested not in ("SIGTERM", "SIGINT") and restarts < self.max_requeues:
            # by its own id as squeue shows it (A_i for an array task: the bare SLURM_JOB_ID of
            # task 0 is the whole array's, and requeueing it fails for the tasks still pending)
            ok, state = requeue(job, restarts)
            if ok:
                for n in names:
                    note(self.store, n, job, {"event": "requeued", "restarts": restarts + 1, "slurm_state": state,
                                              "after": [r.get("error", "") for r in late][0]})
                sys.exit(0)  # no result: SLURM starts the job again, and it continues the run
            why = f"scontrol requeue {job} did not requeue it ({state})"
        for r in late:
            r["error"] = f"{r.get('error', 'time limit')}; {why}; the same command continues it"
        for r in results:
            note(self.store, r["run"], job, {"event": "ended", "result": r})
        return results

    def checkpoint(self):
        """submitit's timeout signal (a round overran the margin): requeue as it is; the
        run continues from its last complete round."""
        import submitit

        return submitit.helpers.DelayedSubmission(self)


def requeue(job: str, restarts: int) -> tuple[bool, str]:
    """``scontrol requeue JOB``, then what SLURM says of the job (``scontrol show job``):
    requeued only where SLURM's restart count went up or its state is a requeue's, never
    taken from the command's exit status alone. Returns (requeued, what SLURM said)."""
    try:
        subprocess.run(["scontrol", "requeue", job], check=True, timeout=120, capture_output=True, text=True)
    except (OSError, subprocess.SubprocessError) as e:  # e.g. a cluster that forbids requeues
        return False, f"scontrol requeue {job} failed: {(getattr(e, 'stderr', None) or str(e)).strip()[:200]}"
    for _ in range(10):
        out = subprocess.run(["scontrol", "show", "job", job], timeout=60, capture_output=True, text=True)
        fields = dict(w.split("=", 1) for w in out.stdout.split() if "=" in w)
        state, count = fields.get("JobState", "?"), int(fields.get("Restarts", "0") or 0)
        if count > restarts or state in ("REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "PENDING"):
            return True, f"JobState={state} Restarts={count}"
        time.sleep(1)
    return False, f"after scontrol requeue, SLURM shows JobState={state} Restarts={count}"


def rounds_done(store: str, cfg_json: dict) -> int:
    """The run's complete rounds in the store, as the store reads them (0 for a run not yet
    written, or one whose run.json cannot be read: the training names that)."""
    from ..config import RunConfig
    from ..errors import CollapseLabError
    from ..store import RunDir, run_path

    try:
        path = run_path(Path(store), RunConfig.from_json(cfg_json))
        return int(RunDir(path).meta.get("rounds_complete", 0)) if RunDir(path).exists() else 0
    except (CollapseLabError, OSError, ValueError, TypeError):
        return 0


def job_ids() -> tuple[str, str]:
    """(the id squeue shows: ``A_i`` for an array task, the job id else; the job's own id)."""
    own = os.environ.get("SLURM_JOB_ID", "")
    array, task = os.environ.get("SLURM_ARRAY_JOB_ID"), os.environ.get("SLURM_ARRAY_TASK_ID")
    return (f"{array}_{task}" if array and task else own), own


def note(store: str, run: str, job: str, event: dict) -> None:
    """Append ``event`` to what this job wrote of ``run`` (atomically; the job is its one writer)."""
    from ..files import make_dirs, write_json

    from ..store.paths import slurm_job_record

    path = slurm_job_record(store, run, job)
    make_dirs(path.parent)
    try:
        events = json.loads(path.read_text()).get("events", [])
    except (OSError, json.JSONDecodeError):
        events = []
    events.append({"at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **event})
    write_json(path, {"run": run, "job_id": job, "events": events})
