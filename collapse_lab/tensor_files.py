"""Tensor files: the safetensors format (tensors only, never a pickle; metadata as one
JSON string so identical weights give identical bytes) and the check of a checkpoint
against a model's tensor names and shapes. Written atomically through ``files``."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

import torch
from safetensors.torch import load_file, save_file

from .errors import CollapseLabError
from .faults import no_fault
from .files import _atomic


def save_tensors(path: Path, tensors: dict[str, torch.Tensor], metadata: dict | None = None,
                 fault: Callable[[str], None] = no_fault) -> None:
    """Save a flat dict of tensors as safetensors (no pickle), atomically.

    The metadata goes in as one JSON string under a single key: safetensors writes
    several keys in hash-map order, which changes between processes, and identical
    weights should give identical bytes (content hashes key the feature cache).
    """
    flat = {k: v.detach().cpu().contiguous() for k, v in tensors.items()}
    meta = {"collapse_lab": json.dumps(metadata, sort_keys=True)} if metadata else None

    def write(tmp: str) -> None:
        try:
            save_file(flat, tmp, metadata=meta)
        except OSError:
            raise
        except Exception as e:  # safetensors reports I/O errors as SafetensorError("... (os error 28)")
            import re

            m = re.search(r"os error (\d+)", str(e))
            if m is None:
                raise
            code = int(m.group(1))
            raise OSError(code, os.strerror(code), str(path)) from None

    _atomic(path, write, fault)


def read_metadata(path: Path) -> dict:
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as f:
        meta = f.metadata() or {}
    return json.loads(meta.get("collapse_lab", "{}"))


def load_tensors(path: Path) -> dict[str, torch.Tensor]:
    """Read a safetensors file (tensors only, never unpickled). A missing, truncated or
    corrupt file raises CollapseLabError naming the file and what is wrong."""
    path = Path(path)
    if not path.is_file():
        raise CollapseLabError(f"{path}: no such checkpoint file")
    try:
        return load_file(str(path))
    except Exception as e:  # safetensors raises SafetensorError, OSError or ValueError
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise CollapseLabError(f"{path}: not a readable safetensors file ({reason}); it is truncated or corrupt, "
                               "delete it and resume or retrain the run") from None


def safetensors_problem(path: Path) -> str | None:
    """Why a safetensors file cannot be read whole (missing, truncated, a header that
    does not parse), read from its header alone; None when it is intact as far as the
    header tells (the tensor bytes themselves are not hashed)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                return "truncated"
            n = int.from_bytes(head, "little")
            if n > size - 8 or n > 100_000_000:
                return "truncated or not a safetensors file"
            header = json.loads(f.read(n))
    except FileNotFoundError:
        return "missing"
    except (OSError, ValueError, UnicodeDecodeError) as e:
        return f"unreadable ({type(e).__name__})"
    if not isinstance(header, dict):
        return "not a safetensors file"
    try:
        end = max((int(v["data_offsets"][1]) for k, v in header.items() if k != "__metadata__"), default=0)
    except (KeyError, TypeError, ValueError, IndexError):
        return "a damaged header"
    if 8 + n + end != size:
        return "truncated" if 8 + n + end > size else "longer than its header says"
    return None


def check_state(path: Path, state: dict[str, torch.Tensor], expected: dict[str, torch.Tensor],
                extra_ok: bool = False) -> None:
    """Refuse a checkpoint whose tensor names or shapes differ from the model's
    (``extra_ok``: tensors the model lacks are allowed when all of its own are there)."""
    missing = sorted(set(expected) - set(state))
    extra = sorted(set(state) - set(expected))
    wrong = [f"{k} {tuple(state[k].shape)} != {tuple(expected[k].shape)}" for k in sorted(set(state) & set(expected))
             if tuple(state[k].shape) != tuple(expected[k].shape)]
    if extra_ok and not (missing or wrong):
        extra = []
    problems = []
    if missing:
        problems.append(f"missing {', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}")
    if extra:
        problems.append(f"unexpected {', '.join(extra[:3])}{' ...' if len(extra) > 3 else ''}")
    if wrong:
        problems.append(f"shape {'; '.join(wrong[:3])}{' ...' if len(wrong) > 3 else ''}")
    if problems:
        raise CollapseLabError(f"{path} does not match the run's model ({'; '.join(problems)}); "
                               "it belongs to another model or run")


def load_state(path: Path, model: torch.nn.Module, extra_ok: bool = False) -> dict[str, torch.Tensor]:
    """Load a model checkpoint, checked against the model's names and shapes. With
    ``extra_ok`` only the model's own tensors are returned: the analyses read a
    checkpoint into the bare architecture, without what a method added beside the
    representation (MOON's projection head)."""
    state = load_tensors(path)
    expected = model.state_dict()
    check_state(path, state, expected, extra_ok)
    return {k: state[k] for k in expected} if extra_ok else state
