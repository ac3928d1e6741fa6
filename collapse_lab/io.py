"""Atomic file writes: temporary file in the same folder, fsync, rename.

A reader never sees a half-written file: either the old content or the new one.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Callable

import torch
from safetensors.torch import load_file, save_file


def _atomic(path: Path, write: Callable[[str], None]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_bytes(path: Path, data: bytes) -> None:
    def w(tmp: str) -> None:
        with open(tmp, "wb") as f:
            f.write(data)

    _atomic(path, w)


def write_json(path: Path, obj) -> None:
    write_bytes(path, (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode())


def append_jsonl(path: Path, obj) -> None:
    # Appends are line-sized and flushed; a crash can lose at most the last line.
    with open(path, "a") as f:
        f.write(json.dumps(obj, sort_keys=True) + "\n")
        f.flush()
        os.fsync(f.fileno())


def save_tensors(path: Path, tensors: dict[str, torch.Tensor], metadata: dict | None = None) -> None:
    """Save a flat dict of tensors as safetensors (no pickle), atomically.

    The metadata goes in as one JSON string under a single key: safetensors writes
    several keys in hash-map order, which changes between processes, and identical
    weights should give identical bytes (content hashes key the feature cache).
    """
    flat = {k: v.detach().cpu().contiguous() for k, v in tensors.items()}
    meta = {"collapse_lab": json.dumps(metadata, sort_keys=True)} if metadata else None
    _atomic(path, lambda tmp: save_file(flat, tmp, metadata=meta))


def read_metadata(path: Path) -> dict:
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as f:
        meta = f.metadata() or {}
    return json.loads(meta.get("collapse_lab", "{}"))


def load_tensors(path: Path) -> dict[str, torch.Tensor]:
    return load_file(str(path))
