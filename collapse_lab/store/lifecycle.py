"""A run folder's life at its two edges: created whole (written in a hidden temporary folder,
then renamed into place, so a failure leaves no half-written run), and cut back to its last
complete round before a resume."""
from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import Callable

import torch

from ..errors import CollapseLabError
from ..faults import no_fault
from ..files import temp_dir, write_bytes, write_json
from ..partition import Partition
from ..tensor_files import save_tensors
from . import retention
from .format import FORMAT_VERSION, package_versions
from .paths import child, is_run_folder
from .layout import global_path


def create(out: Path, name: str, config_json: dict, partition: Partition | None,
           init_state: dict[str, torch.Tensor] | None, extra: dict,
           fault: Callable[[str], None] = no_fault) -> Path:
    """Create the run folder complete with run.json, partition and round_0, then
    rename it into place, so a failure leaves no half-written run behind; returns its path. (A
    run recorded from elsewhere, ``store.writer``, may lack the partition or round 0.)"""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _remove_stale_temps(out, name)
    tmp = temp_dir(out, f".{name}.")
    try:
        if partition is not None:
            partition.save(tmp / "partition.safetensors", fault)
        if init_state is not None:
            save_tensors(global_path(tmp, 0), init_state, metadata={"round": "0", "model": "global"}, fault=fault)
        (tmp / "metrics.jsonl").touch()
        # The resolved config sits at the top level, beside the run's bookkeeping.
        meta = {**config_json, "name": name, "format_version": FORMAT_VERSION, "status": "running", "rounds_complete": 0,
                "partition_hash": None if partition is None else partition.content_hash(),
                "versions": package_versions(),
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **extra}
        write_json(tmp / "run.json", meta, fault)
        final = child(out, name)
        if final.exists() or final.is_symlink():
            # --overwrite (checked by training.prepare): only ever a collapse-lab run folder
            if not is_run_folder(final):
                raise CollapseLabError(f"{final} exists and is not a collapse-lab run folder; it is left alone: "
                                       "move it away or choose another --store or --tag")
            shutil.rmtree(final)
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def discard_after(run, r: int) -> None:
    """Before a resume from round r: remove later (partial) rounds, temporary files and
    the metrics events of later rounds, so the continued run writes them afresh (and
    forget that later rounds were pruned: they are written again)."""
    meta = run.meta
    if isinstance(meta.get("pruned"), dict):
        run.update(pruned=retention.forget_after(meta, r))
    for d in run.path.glob("round_*"):
        try:
            q = int(d.name.split("_", 1)[1])
        except ValueError:
            continue
        if q > r:
            shutil.rmtree(d)
    for tmp in list(run.path.glob(".*.tmp")) + list(run.path.glob("round_*/.*.tmp")):
        tmp.unlink(missing_ok=True)
    p = run.path / "metrics.jsonl"
    keep = []
    for line in (p.read_text().splitlines() if p.exists() else []):
        try:
            e = json.loads(line)
            q = int(e.get("round", 0))
        except (ValueError, TypeError, AttributeError):
            continue  # the torn last line of a killed write, or a line that is not an event
        if q <= r:
            keep.append(line + "\n")
    write_bytes(p, "".join(keep).encode(), run.fault)


def _remove_stale_temps(out: Path, name: str) -> None:
    """A creation that was killed (SIGKILL, a crash) leaves its hidden temporary folder; the
    run's writer holds the run's lock now, so any temporary folder of the same name is a dead
    creator's and goes (``files.temp_dir``'s names: the prefix and 8 random characters)."""
    prefix = f".{name}."
    for stale in out.iterdir():
        if (stale.name.startswith(prefix) and re.fullmatch(r"[a-z0-9_]{8}", stale.name[len(prefix):])
                and stale.is_dir() and not stale.is_symlink()):
            shutil.rmtree(stale, ignore_errors=True)
