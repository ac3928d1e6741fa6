"""A run recorded whole at once (``collapse-lab import``): written by the store's writer in
a temporary folder of the store and renamed into place under the run's lock, so a failed
import leaves nothing and no reader ever sees half a run."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..errors import CollapseLabError


def write_whole_run(store, name: str, config: dict, initial, rounds: dict, option: str = "--store",
                    **writer_options) -> Path:
    """Record ``rounds`` (round -> (global state, {client: state})) as the run ``name`` of
    ``store``; a run of that name there already is refused. ``writer_options`` go to
    ``RunWriter`` (normalize, data_root, source, ...); rounds not given have no files."""
    from ..files import temp_dir
    from . import lock
    from .paths import check_store_for_writing, child
    from .writer import RunWriter

    out_store = check_store_for_writing(store, option)
    final = child(out_store, name)
    if final.exists() or final.is_symlink():
        raise CollapseLabError(f"{final} exists already; choose another {option} or --tag")
    out_store.mkdir(parents=True, exist_ok=True)
    lock.acquire(final)
    tmp = temp_dir(out_store, ".import.")
    try:
        w = RunWriter(tmp, config, initial=initial, gaps=True, **writer_options)
        for r in sorted(rounds):  # the rounds the other code saved keep their numbers
            w.write_round(r, rounds[r][0], rounds[r][1], {"imported": True})
        w.close()
        if final.exists():
            raise CollapseLabError(f"{final} appeared while importing; choose another {option} or --tag")
        os.replace(tmp / name, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        lock.release(final)
    return final
