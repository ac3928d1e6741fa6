"""Runs another collapse-lab process is training when ``figures``, ``tables`` or ``ladder``
would train them: waited for, then read, as ``sweep`` watches runs a SLURM job trains (two
commands sharing runs both end with their figures, not one with the other's lock error)."""
from __future__ import annotations

import time
from pathlib import Path

LOCKED = "is being written by another collapse-lab process"  # store.lock's refusal


def trained_elsewhere(store: Path, configs: list) -> tuple[list, list]:
    """(the runs to plan here, those another process holds the lock of: it is training them)."""
    from ..store import run_path
    from ..store.lock import held_elsewhere

    busy = [c for c in configs if held_elsewhere(run_path(store, c))]
    return [c for c in configs if c not in busy], busy


def held_by(store: Path, cfg) -> str:
    from ..store import run_path
    from ..store.lock import held_elsewhere

    return held_elsewhere(run_path(store, cfg)) or "finished now"


def wait_for(store: Path, configs: list, say, poll: float = 5.0) -> list[dict]:
    """Wait until no other process holds these runs' locks; the ones left incomplete (the other
    process stopped or failed) are this command's failures, saying so. Ctrl-C stops waiting."""
    from ..store import RunDir, run_path
    from ..store.lock import UNCHECKED, held_elsewhere

    left, unchecked = list(configs), {}
    while left:
        held = {c.run_name(): held_elsewhere(run_path(store, c)) for c in left}
        unchecked.update({n: h for n, h in held.items() if h and UNCHECKED in h})  # never waited on forever
        left = [c for c in left if held[c.run_name()] and c.run_name() not in unchecked]
        if left:
            time.sleep(poll)
    failed = []
    for c in configs:
        run = RunDir(run_path(store, c))
        if c.run_name() in unchecked:
            failed.append({"run": c.run_name(), "status": "failed",
                           "error": f"held by {unchecked[c.run_name()]}; it is not read or trained here"})
        elif not run.is_complete(c.rounds):
            failed.append({"run": c.run_name(), "status": "failed",
                           "error": f"the process that trained it stopped at round {run.meta.get('rounds_complete', 0)} "
                                    f"({run.status}); the same command continues it"})
    if configs:
        say(f"{len(configs) - len(failed)} of {len(configs)} run(s) the other process trained are complete")
    return failed


def lost_the_lock(results: list[dict], configs: list) -> list:
    """The runs another process took between this command's planning and training: refused
    for its lock (it is training them) or for what it wrote meanwhile (it trained them)."""
    lost = {r["run"] for r in results if raced(r)}
    return [c for c in configs if c.run_name() in lost]


def raced(result: dict) -> bool:
    """Whether a run's training was refused because another process took it after this
    command planned it: its lock (training it) or its run.json changed (trained it)."""
    from ..training.prepare import CHANGED

    error = str(result.get("error", ""))
    return result.get("status") != "complete" and (LOCKED in error or CHANGED in error)
