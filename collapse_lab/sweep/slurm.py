"""``--backend slurm``: each unit of a sweep (a run, or a stack of runs) is one SLURM job,
submitted as a job array through submitit (the ``slurm`` extra, imported only here).

A job trains with a time limit of its own (``--time-limit``, by default the job's time less
a margin: ``train_limit``), keeps every complete round, and when the limit stops it
requeues itself (``scontrol requeue``: the same job id, SLURM's ``SLURM_RESTART_COUNT``
counts the restarts) until the run is complete or ``--max-requeues`` is reached
(``slurm_job``). A run that diverges or fails is not requeued.

The store keeps the account of what was submitted (``records``): ``<store>/.slurm/runs/``
holds per run the submission (job id, when, from where; written by the submitter) and the
job's own events (started, requeued, ended; written by the job); ``<store>/.slurm/jobs/<id>/``
is submitit's folder with the job's log. A run whose job is queued or running is not
submitted again (``held``): two sweeps over overlapping grids train each run once.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Callable

from ..errors import CollapseLabError
from ..files import make_dirs, write_json
from ..store.paths import slurm_job_folder, slurm_job_record, slurm_submission, slurm_submit_lock
from .slurm_options import SlurmOptions, margin, sbatch_flags, sbatch_options

LIVE = {"PENDING", "RUNNING", "REQUEUED", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUE_HOLD", "REQUEUE_FED",
        "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED", "RESV_DEL_HOLD"}
TOOLS = ("sbatch", "squeue", "sinfo", "scontrol")


def check_cluster(o: SlurmOptions) -> None:
    """The extra, the SLURM tools, a controller that answers, the partition and what
    ``sbatch --test-only`` says of the job's options: one line each, before anything is
    submitted."""
    try:
        import submitit  # noqa: F401
    except ImportError:
        raise CollapseLabError("--backend slurm needs submitit: pip install 'collapse-lab[slurm]' "
                               "(or pip install submitit)") from None
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        raise CollapseLabError(f"--backend slurm: no SLURM on this machine ({missing[0]} is not on PATH); run it on the "
                               "cluster's login node, or use --backend local")
    out = _run(["sinfo", "-h", "-o", "%R"])
    if out.returncode != 0:
        raise CollapseLabError(f"--backend slurm: SLURM does not answer (sinfo: {_first(out.stderr)}); check that its "
                               "controller runs, or use --backend local")
    parts = sorted(set(out.stdout.split()))
    if o.partition is not None and o.partition not in parts:
        raise CollapseLabError(f"--slurm-partition {o.partition}: no such partition on this cluster; its partitions: "
                               f"{', '.join(parts) or 'none'}")
    test = _run(["sbatch", "--test-only", *sbatch_flags(o), "--wrap", "true"])
    if test.returncode != 0:
        raise CollapseLabError(f"--backend slurm: SLURM refuses the job's options ({_first(test.stderr)}); check "
                               "--slurm-partition, --slurm-account, --slurm-qos and --slurm-option")


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return subprocess.CompletedProcess(cmd, 1, "", str(e))


def _first(text: str) -> str:
    lines = [ln.strip() for ln in (text or "").strip().splitlines() if ln.strip()]
    return lines[0][:200] if lines else "no message"


# -- the store's account of submitted jobs ------------------------------------------------

def records(store: Path) -> Path:
    from ..store.paths import slurm_records

    return slurm_records(store)


def submission(store: Path, run: str) -> dict | None:
    """The submission record of ``run`` (the latest), or None."""
    p = slurm_submission(store, run)
    try:
        return json.loads(p.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def job_events(store: Path, run: str, job_id: str) -> list[dict]:
    """What job ``job_id`` wrote of ``run``: its starts, requeues and outcome."""
    p = slurm_job_record(store, run, job_id)
    try:
        return json.loads(p.read_text()).get("events", [])
    except (OSError, json.JSONDecodeError):
        return []


def queue_states(job_ids: list[str]) -> dict[str, tuple[str, str]]:
    """job id -> (state, reason) of the jobs SLURM still lists (array tasks one by one)."""
    if not job_ids:
        return {}
    ids = sorted({j.split("_")[0] for j in job_ids})
    out = _run(["squeue", "-h", "-r", "--states=all", "-j", ",".join(ids), "-o", "%i|%T|%r"])
    states = {}
    for line in out.stdout.splitlines():
        parts = line.strip().split("|")
        if len(parts) == 3:
            states[parts[0]] = (parts[1], parts[2])
    return states


def held(store: Path, names: list[str]) -> dict[str, str]:
    """run -> its job id, for the runs whose job is queued or running (not to be submitted again)."""
    subs = {n: s for n in names if (s := submission(store, n))}
    states = queue_states([s["job_id"] for s in subs.values()])
    return {n: s["job_id"] for n, s in subs.items() if states.get(s["job_id"], ("", ""))[0] in LIVE}


def split_busy(store: Path, configs: list) -> tuple[list, list]:
    """(the configurations to plan, those whose SLURM job is queued or running): a run a job
    trains holds its lock, and a sweep skips it (``submit`` names the job and ``wait``
    watches it) instead of failing on the lock."""
    if not records(store).is_dir():
        return list(configs), []
    busy = held(Path(store), [c.run_name() for c in configs])
    return [c for c in configs if c.run_name() not in busy], [c for c in configs if c.run_name() in busy]


def outcome(store: Path, run: str, job_id: str) -> dict | None:
    """The run's outcome as its job wrote it (the last "ended" event), or None."""
    ended = [e for e in job_events(store, run, job_id) if e.get("event") == "ended"]
    return ended[-1]["result"] if ended else None


# -- submitting and waiting ---------------------------------------------------------------

def submit(work: list[list], store: Path, o: SlurmOptions, say: Callable[[str], None]) -> list[tuple[list, str]]:
    """Submit one job per unit (a job array); returns (unit, job id) pairs to watch: the
    submitted ones, then each run whose job was queued or running already (not submitted
    again; said, with its job)."""
    import submitit

    from ..store.lock import store_lock
    from .slurm_job import UnitJob

    store = Path(store)
    make_dirs(slurm_submission(store, "-").parent)
    with store_lock(slurm_submit_lock(store)):  # two sweeps submitting at once: one after the other
        busy = held(store, [c.run_name() for u in work for c in u])
        watch = []
        for u in work:
            for c in u:
                if c.run_name() in busy:
                    say(f"{c.run_name()} is queued or running in SLURM job {busy[c.run_name()]}; not submitted again")
                    watch.append(([c], busy[c.run_name()]))
        todo = [v for u in work if (v := [c for c in u if c.run_name() not in busy])]
        if not todo:
            return watch
        ex = submitit.SlurmExecutor(folder=str(slurm_job_folder(store, "%j")), max_num_timeout=o.max_requeues)
        ex.update_parameters(job_name="collapse-lab", use_srun=False, stderr_to_stdout=True,
                             signal_delay_s=int(max(30, margin(o.job_seconds()) / 2)),  # after our own stop: a fallback
                             additional_parameters={**sbatch_options(o), "requeue": True})
        with ex.batch():
            jobs = [ex.submit(UnitJob([c.to_json() for c in u], str(store.resolve()), o.cpus, o.train_seconds(),
                                      o.max_requeues)) for u in todo]
        now = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        for u, job in zip(todo, jobs):
            for c in u:
                write_json(slurm_submission(store, c.run_name()),
                           {"run": c.run_name(), "job_id": str(job.job_id), "submitted": now,
                            "host": socket.gethostname(), "user": os.environ.get("USER", ""),
                            "log": str(slurm_job_folder(store, job.job_id)), "options": _options_json(o)})
    return [(u, str(j.job_id)) for u, j in zip(todo, jobs)] + watch


def _options_json(o: SlurmOptions) -> dict:
    return {"partition": o.partition, "account": o.account, "qos": o.qos, "gpus": o.gpus, "cpus": o.cpus, "mem": o.mem,
            "time": o.time, "extra": dict(o.extra), "max_requeues": o.max_requeues,
            "train_seconds": o.train_seconds()}


def wait(submitted: list[tuple[list, str]], store: Path, o: SlurmOptions, report: Callable[[dict], None],
         say: Callable[[str], None]) -> list[dict]:
    """Watch the jobs until each has an outcome: events to ``report`` as the other backends
    send them ({"event": "start"|"end", "run", ...}); a requeue is said. A job that leaves
    the queue without an outcome fails its runs, naming its state and log."""
    left = {job: unit for unit, job in submitted}
    seen_running, seen_requeues, results, t0 = set(), {}, [], time.time()
    while left:
        states = queue_states(list(left))
        for job, unit in list(left.items()):
            state, reason = states.get(job, ("", ""))
            names = [c.run_name() for c in unit]
            if state == "RUNNING" and job not in seen_running:  # its first start (a requeue is said below)
                seen_running.add(job)
                for n in names:
                    report({"event": "start", "run": n})
            n_re = sum(e.get("event") == "requeued" for e in job_events(store, names[0], job))
            if n_re > seen_requeues.get(job, 0):
                seen_requeues[job] = n_re
                say(f"job {job} ({names[0]}{', ...' if len(names) > 1 else ''}) requeued after its time limit "
                    f"({n_re} of at most {o.max_requeues})")
            outs = {n: outcome(store, n, job) for n in names}
            if all(outs.values()):
                done = [{**outs[n], "job_id": job, "requeues": n_re} for n in names]
            elif state and state in LIVE:
                continue
            elif state == "" and time.time() - t0 < 60:
                continue  # just submitted: not listed yet
            else:
                why = f"ended {state or 'and left the queue'}" + (f" ({reason})" if reason and reason != "None" else "")
                done = [outs[n] and {**outs[n], "job_id": job} or
                        {"run": n, "status": "failed", "job_id": job, "requeues": n_re,
                         "error": f"SLURM job {job} {why} without an outcome; its log: "
                                  f"{slurm_job_folder(store, job)}"} for n in names]
            del left[job]
            if job not in seen_running:  # it ran and ended between two looks
                for n in names:
                    report({"event": "start", "run": n})
            for r in done:
                r.setdefault("wall_seconds", round(time.time() - t0, 2))
                results.append(r)
                report({"event": "end", **r})
        if left:
            time.sleep(o.poll)
    return results
