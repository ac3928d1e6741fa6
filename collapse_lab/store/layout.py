"""Where a run folder keeps each round's checkpoints (docs/store-format.md): the names
``RunDir`` reads and writes, and the creation of a run writes its round 0 under."""
from __future__ import annotations

from pathlib import Path


def round_dir(run: Path, r: int) -> Path:
    return Path(run) / f"round_{r}"


def global_path(run: Path, r: int) -> Path:
    return round_dir(run, r) / "global.safetensors"


def client_path(run: Path, r: int, k: int) -> Path:
    return round_dir(run, r) / f"client_{k}.safetensors"
