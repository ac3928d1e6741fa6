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

from .faults import no_fault
from .errors import CollapseLabError


def _umask_by_setting() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# Setting the umask to read it would race with files created meanwhile by the checkpoint
# writer's thread, so it is read from /proc where there is one (Linux), and otherwise
# once, at import, in the main thread.
_IMPORT_UMASK = _umask_by_setting()


def umask() -> int:
    """The process's current umask, read without changing it (Linux), else the one at import."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    return _IMPORT_UMASK


def file_mode() -> int:
    return 0o666 & ~umask()


def dir_mode() -> int:
    return 0o777 & ~umask()


def make_dirs(path: Path) -> None:
    """mkdir -p that follows the umask (as mkdir does)."""
    Path(path).mkdir(parents=True, exist_ok=True)


def temp_file(folder: Path, prefix: str, suffix: str) -> str:
    """A new empty temporary file in ``folder`` with the mode the umask gives a new file
    (mkstemp makes it 0600, which would keep colleagues from reading checkpoints)."""
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=folder)
    os.fchmod(fd, file_mode())
    os.close(fd)
    return tmp


def temp_dir(folder: Path, prefix: str) -> Path:
    """A new temporary folder with the umask's mode (mkdtemp makes it 0700)."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=folder))
    os.chmod(tmp, dir_mode())
    return tmp


def _atomic(path: Path, write: Callable[[str], None], fault: Callable[[str], None] = no_fault) -> None:
    path = Path(path)
    make_dirs(path.parent)
    tmp = temp_file(path.parent, f".{path.name}.", ".tmp")
    try:
        write(tmp)
        with open(tmp, "rb+") as f:
            os.fchmod(f.fileno(), file_mode())  # a writer may have made the file anew (safetensors does, 0600)
            os.fsync(f.fileno())
        fault("write")
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable (a crash right after it keeps the new name)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_bytes(path: Path, data: bytes, fault: Callable[[str], None] = no_fault) -> None:
    def w(tmp: str) -> None:
        with open(tmp, "wb") as f:
            f.write(data)

    _atomic(path, w, fault)


def write_json(path: Path, obj, fault: Callable[[str], None] = no_fault) -> None:
    write_bytes(path, (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode(), fault)


def append_jsonl(path: Path, *objs) -> None:
    """One line per object, in one write and one fsync (a client's epoch records together:
    an fsync per line cost a sweep of small runs a tenth of its time)."""
    # Appends are flushed and synced; a crash can lose at most the last lines, never a
    # line's beginning (readers skip a torn last line).
    with open(path, "a") as f:
        f.write("".join(json.dumps(obj, sort_keys=True) + "\n" for obj in objs))
        f.flush()
        os.fsync(f.fileno())


_warned: set[str] = set()


def read_jsonl(path: Path, warn: Callable[[str], None] | None = None) -> list[dict]:
    """The JSON objects of a ``.jsonl`` file, one per line. Readers are tolerant: a torn
    last line (a killed append) or a garbage line is skipped, and said once per file per
    process to ``warn`` (default: one ``warning:`` line on stderr); writers are strict."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as e:
        raise CollapseLabError(f"{path} cannot be read ({e.strerror or type(e).__name__})") from None
    events, bad = [], []
    for i, line in enumerate(raw.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            e = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            bad.append(i)
            continue
        if isinstance(e, dict):
            events.append(e)
        else:
            bad.append(i)
    if bad and str(path) not in _warned:
        _warned.add(str(path))
        msg = (f"{path}: skipped {len(bad)} unreadable line(s) (line {', '.join(map(str, bad[:5]))}"
               f"{', ...' if len(bad) > 5 else ''}); the other events are used")
        if warn is None:
            import sys

            print(f"warning: {msg}", file=sys.stderr)
        else:
            warn(msg)
    return events


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


class AsyncWriter:
    """Writes files on one background thread, in submission order, so training goes on
    while a checkpoint reaches the disk. ``flush`` waits for everything submitted and
    re-raises the first error (a full disk, say); at most ``depth`` writes wait, so a disk
    slower than training holds training back instead of filling memory."""

    def __init__(self, depth: int = 4):
        import queue
        import threading

        self._q: "queue.Queue" = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None
        self.busy_seconds = 0.0  # time the thread spent writing
        self._thread = threading.Thread(target=self._run, name="collapse-lab-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import time

        while True:
            job = self._q.get()
            try:
                if job is None:
                    return
                if self._error is None:
                    t0 = time.perf_counter()
                    job()
                    self.busy_seconds += time.perf_counter() - t0
            except BaseException as e:  # kept for the training thread to raise
                self._error = e
            finally:
                self._q.task_done()

    def submit(self, job: Callable[[], None]) -> None:
        self._raise()
        self._q.put(job)

    def flush(self) -> None:
        self._q.join()
        self._raise()

    def close(self) -> None:
        """Finish pending writes and stop the thread (errors are raised by ``flush``)."""
        if self._thread.is_alive():
            self._q.put(None)
            self._thread.join()

    def _raise(self) -> None:
        if self._error is not None:
            e, self._error = self._error, None
            raise e
