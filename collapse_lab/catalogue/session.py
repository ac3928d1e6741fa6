"""One call of the catalogue: its entries' runs planned, the missing ones trained, and the
analysis context over the store, for ``render``'s functions to read."""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..runspec.expand import precision_line
from .planning import plan
from .training import train_missing


@dataclass
class Session:
    """What rendering needs once the runs are planned and trained: the entries, each one's
    run names (or why it is not available), the training failures, the analysis context
    over the store, where outputs go, where progress is said, and the times."""
    entries: list
    per_entry: dict
    failed: list
    ctx: object
    out: Path
    say: Callable[[str], None]
    t0: float
    t_train: float


def output_folder(out: Path, runs) -> Path:
    """Where a call's outputs go: ``out``, or with ``--set`` overrides ``out/set-K=V,...``
    (a render with overrides lives beside the default one, never over it)."""
    if not runs.overrides:
        return Path(out)
    from .claims_file import override_folder

    return Path(out) / override_folder(runs.overrides)


def open_session(entries, runs, store: Path, out: Path, say: Callable[[str], None], train: bool = True,
                 backend: str = "local", workers: int | None = None, stack: int = 8, address=None,
                 keep: str = "read", time_limit: str | None = None, slurm=None,
                 drop_checkpoints: bool = False) -> Session:
    """Plan ``entries`` under ``runs`` (a ``collapse_lab.plan.Plan``), say the first line
    (the runs and their precision), train what the store lacks unless ``train`` is False
    (the sweep's ``Interrupted`` reaches the caller; a ``time-limit`` failure is in
    ``failed``), and open the analysis context. ``out`` is the folder outputs go to."""
    from ..plan import context

    notes: list[str] = []  # said after the first line, which names the precision
    configs, per_entry, _ = plan(entries, runs, Path(store), lambda m: None, keep, note=notes.append)
    say(f"{len(configs)} run(s) for {len(entries)} entr{'y' if len(entries) == 1 else 'ies'}, precision "
        f"{precision_line(configs, auto=runs.precision is None)}")
    for n in notes:
        say(n)
    t0 = time.time()
    failed = [] if not train else train_missing(configs, Path(store), backend, workers, stack, address, say,
                                                drop_checkpoints, time_limit, slurm)
    ctx = context(Path(store), runs.preset, runs.smoke, runs.data_root, runs.precision, runs.overrides, plan=runs)
    return Session(entries, per_entry, failed, ctx, Path(out), say, t0, time.time() - t0)
