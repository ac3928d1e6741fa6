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


def in_stored_precision(store: Path, cfg):
    """``(cfg, note)``: the configuration of the run the store holds for ``cfg`` when its
    precision was not chosen (``auto``). Where no run of ``cfg``'s precision is stored but
    one of the other precision is (trained with ``auto`` on a GPU, continued on a CPU, or
    the reverse), that run's configuration and a line saying so; otherwise ``cfg`` and None.
    A run keeps the precision it was trained in (issue 47), so a resume never starts a
    new run beside an unfinished one."""
    import dataclasses

    if (run_path(store, cfg) / "run.json").is_file():
        return cfg, None
    other = dataclasses.replace(cfg, precision="bf16" if cfg.precision == "fp32" else "fp32")
    path = run_path(store, other)
    if not (path / "run.json").is_file():
        return cfg, None
    return other, (f"{path.name}: the store holds this run in {other.precision} (auto would train {cfg.precision} "
                   f"here); using it in the precision it was trained in (--precision {cfg.precision} trains another run)")


def in_stored_precisions(store: Path, configs, say=None) -> list:
    """``in_stored_precision`` of each configuration; each note said once to ``say``."""
    out, said = [], set()
    for c in configs:
        c2, note = in_stored_precision(store, c)
        if note and say is not None and note not in said:
            said.add(note)
            say(f"note: {note}")
        out.append(c2)
    return out
