"""Is a stored run whole? The files each round must hold, checked before a run is skipped
as complete or continued, so that a deleted or damaged checkpoint is found and recreated
(``train --resume``) instead of leaving a "complete" run with a hole.

Which files a round must hold: its global model and the checkpoints of the clients sampled
that round (the trainer says which: ``sampled(r)``), except those the run recorded pruning
(``store.retention``: whatever ``--keep-global``/``--keep-local`` were in force), and the
method's state where present.
"""
from __future__ import annotations

from typing import Callable

from ..tensor_files import safetensors_problem
from .run_dir import RunDir


def first_damage(run: RunDir, sampled: Callable[[int], list[int]], done: int) -> tuple[int, str] | None:
    """The first round (0..done) with a missing or damaged file, and what is wrong; None
    when every file the run should hold is there and intact. A file is expected unless the
    run recorded deleting it (``store.retention``: what --keep-global/--keep-local pruned,
    under whatever policy was in force then)."""
    gone = run.pruned()
    for r in range(done + 1):
        paths = [run.global_path(r)] * (r not in gone["global"])
        if r >= 1 and r not in gone["local"]:
            paths += [run.client_path(r, k) for k in sampled(r)]
        paths += [p for p in (run.method_path(r), run.method_path(r, True)) if p.exists()]
        for p in paths:
            why = safetensors_problem(p)
            if why is not None:
                return r, f"{p.relative_to(run.path)} is {why}"
    return None


def can_restart_after(run: RunDir, r: int, client_state: bool, server_state: bool) -> bool:
    """Whether round r holds what a resume from it reads (the global model, and the
    method's server and per-client state where the method keeps them)."""
    if safetensors_problem(run.global_path(r)) is not None:
        return False
    if server_state and r > 0 and safetensors_problem(run.method_path(r)) is not None:
        return False
    if client_state and r > 0 and safetensors_problem(run.method_path(r, True)) is not None:
        return False
    return True


def damage_on_disk(run: RunDir) -> str | None:
    """The first checkpoint present on disk that cannot be read whole (truncated, a header
    that does not parse), as ``round_3/client_2.safetensors is truncated``; None when every
    file there is intact as far as its header tells (``runs`` says it beside the status)."""
    for r in run.rounds_on_disk():
        paths = [run.global_path(r), run.method_path(r), run.method_path(r, True)]
        paths += [run.client_path(r, k) for k in run.clients_at(r)]
        for p in paths:
            if p.exists() and (why := safetensors_problem(p)) is not None:
                return f"{p.relative_to(run.path).as_posix()} is {why}"
    part = run.partition_path
    if part.exists() and (why := safetensors_problem(part)) is not None:
        return f"partition.safetensors is {why}"
    return None
