"""A store's metrics as TensorBoard event files (``collapse-lab export tensorboard``): round
metrics, per-client local losses and the probe's spectrum summaries of every run."""
from __future__ import annotations

from pathlib import Path

from ..errors import CollapseLabError


def export(store="checkpoints", *, out) -> list[str]:
    """One event-file folder per run of ``store`` under ``out`` (readable by ``tensorboard
    --logdir out``); nothing is left in ``out`` if writing fails. Returns the folders."""
    from ..analysis.tensorboard import export as export_run
    from ..files import missing_folders, remove_empty
    from ..store import find_runs
    from ..store.paths import check_store_for_reading, check_store_for_writing

    runs = find_runs(check_store_for_reading(store))
    if not runs:
        raise CollapseLabError(f"no runs in {store}; train some first (collapse-lab train --store {store})")
    created = missing_folders(Path(out))
    check_store_for_writing(out, "--out")  # a read-only or file target: one line, exit 2, before anything is written
    try:
        return [str(export_run(r, Path(out))) for r in runs]
    except BaseException:
        remove_empty(created)  # no empty out left (each run's log removes its own files)
        raise
