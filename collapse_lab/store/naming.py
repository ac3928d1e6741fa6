"""Where a configuration's run lives in a store (the folder name itself is
``RunConfig.run_name()``: the readable part and the identity hash)."""
from __future__ import annotations

from pathlib import Path

from ..errors import CollapseLabError
from .paths import child
from .run_dir import RunDir


def run_path(store: Path, cfg) -> Path:
    """A run's folder in the store (``cfg`` a ``RunConfig``): ``cfg.run_name()``, or the
    folder an earlier version named ``cfg.legacy_run_name()`` when that one exists and holds
    this configuration (a longer run extends it)."""
    path = child(store, cfg.run_name())
    legacy = Path(store) / cfg.legacy_run_name()
    if not path.exists() and (legacy / "run.json").is_file():
        try:
            old = RunDir(legacy).config.identity()
            if {**old, "rounds": cfg.rounds} == cfg.identity():
                return legacy
        except CollapseLabError:
            pass
    return path
