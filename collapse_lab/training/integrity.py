"""Is a stored run whole? The files each round must hold, checked before a run is skipped
as complete or continued, so that a deleted or damaged checkpoint is found and recreated
(``train --resume``) instead of leaving a "complete" run with a hole.

Which files a round must hold follows from the run's configuration alone: its global
model where ``--keep-global`` keeps it, the checkpoints of the clients sampled that round that ``--keep-local`` keeps, and
the method's state of the last complete round (what a resume reads).
"""
from __future__ import annotations

from ..config import RunConfig
from ..tensor_files import safetensors_problem
from ..store import RunDir, keeps_global, parse_keep_global, parse_keep_local
from .sampling import sample_clients


def kept_clients(cfg: RunConfig, r: int, last: int) -> list[int]:
    """The clients of round r whose checkpoints stay once round ``last`` is complete."""
    mode, n = parse_keep_local(cfg.keep_local)
    keep = (mode == "all" or (mode == "every" and (r % n == 0 or r == cfg.rounds))
            or (mode == "last" and r == last))
    return sample_clients(cfg, r) if keep and r >= 1 else []


def first_damage(run: RunDir, cfg: RunConfig, done: int) -> tuple[int, str] | None:
    """The first round (0..done) with a missing or damaged file, and what is wrong; None
    when every file the run should hold is there and intact."""
    for r in range(done + 1):
        kept = keeps_global(parse_keep_global(cfg.keep_global), r, done, cfg.rounds)
        paths = [run.global_path(r)] * kept + [run.client_path(r, k) for k in kept_clients(cfg, r, done)]
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
