"""A sweep's runs as they stand (``sweep SPEC --status``): each run's state in the store and,
where it was submitted to SLURM, its job: id, SLURM state (``squeue``) or, once the job left
the queue, what the job wrote last, and how often it was requeued."""
from __future__ import annotations

from pathlib import Path


def store_state(store: Path, cfg) -> str:
    from ..errors import CollapseLabError
    from ..store import RunDir, run_path

    path = run_path(store, cfg)
    if not RunDir(path).exists():
        return "missing"
    try:
        meta = RunDir(path).meta
    except CollapseLabError:  # a damaged run.json (RunDir.meta says why) is a state to show, not a stop
        return "unreadable"
    if meta.get("status") in ("complete", "diverged"):
        return str(meta["status"])
    return f"partial {meta.get('rounds_complete', 0)} of {cfg.rounds}"


def status_rows(configs, store: Path) -> list[dict]:
    """Per run: its name, store state, SLURM job id and state, requeues and last job event."""
    from . import slurm

    subs = {c.run_name(): slurm.submission(store, c.run_name()) for c in configs}
    live = slurm.queue_states([s["job_id"] for s in subs.values() if s]) if any(subs.values()) else {}
    out = []
    for c in configs:
        name, sub = c.run_name(), subs[c.run_name()]
        row = {"run": name, "store": store_state(store, c), "job_id": None, "slurm": None, "requeues": None,
               "last_event": None}
        if sub:
            job = sub["job_id"]
            events = slurm.job_events(store, name, job)
            state, reason = live.get(job, ("", ""))
            row.update(job_id=job, requeues=sum(e.get("event") == "requeued" for e in events),
                       slurm=(f"{state} ({reason})" if reason and reason != "None" else state) or "left the queue",
                       last_event=events[-1] if events else None, log=sub.get("log"))
        out.append(row)
    return out


def status_line(table: list[dict]) -> str:
    """The counts of a status table: runs per store state, and SLURM's queued and running."""
    counts: dict[str, int] = {}
    for r in table:
        key = r["store"].split()[0]
        counts[key] = counts.get(key, 0) + 1
    queued = sum(1 for r in table if r["slurm"] and r["slurm"].split()[0] in ("PENDING", "REQUEUED"))
    running = sum(1 for r in table if r["slurm"] and r["slurm"].split()[0] == "RUNNING")
    return (f"{len(table)} run(s): " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
            + (f"; SLURM: {queued} queued, {running} running" if any(r["job_id"] for r in table) else ""))


def status_lines(table: list[dict]) -> list[str]:
    """``sweep --status``'s text: a line per run (its store state; its SLURM job, requeues and
    how the job ended when it did not complete), then ``status_line``."""
    out = []
    for r in table:
        job = "" if r["job_id"] is None else f"  job {r['job_id']}: {r['slurm']}"
        if r["requeues"]:
            job += f", requeued {r['requeues']}x"
        ev = r["last_event"]
        if ev and ev.get("event") == "ended" and ev["result"].get("status") not in ("complete", "skipped"):
            job += f"; ended {ev['result']['status']}: {ev['result'].get('error', '')}"
        out.append(f"{r['run']:<64} {r['store']}{job}")
    return out + [status_line(table)]
