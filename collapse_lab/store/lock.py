"""One writer per run: an advisory lock on ``<store>/.locks/<run>.lock``.

``fcntl.flock`` locks belong to the open file and the kernel drops them when the process
dies (SIGKILL, a crash, a reboot), so a stale lock never blocks; the lock file itself stays
(removing it could let two processes lock two different files of one name). The lock sits
beside the run folder, not in it: the folder is created by a rename and replaced by
``--overwrite``. A process takes a run's lock once; taking it again is a no-op until
``release``.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from ..errors import CollapseLabError

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; one writer per run is then the user's to keep
    fcntl = None

_held: dict[str, int] = {}  # lock file -> open descriptor, in this process


def lock_path(run_path: Path) -> Path:
    run_path = Path(run_path)
    return run_path.parent / ".locks" / f"{run_path.name}.lock"


def _holder(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        pid = os.read(fd, 32).decode(errors="replace").strip()
        return f" (pid {pid})" if pid.isdigit() else ""
    except OSError:
        return ""


def acquire(run_path: Path) -> None:
    """Take the run's lock or raise CollapseLabError naming the process that holds it."""
    if fcntl is None:
        return
    lp = lock_path(run_path)
    key = os.path.abspath(lp)
    if key in _held:
        return
    lp.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lp, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        for attempt in range(6):  # a reader's momentary check (held_elsewhere) is not a writer
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if attempt == 5:
                    raise
                time.sleep(0.05)
    except BlockingIOError:
        who = _holder(fd)
        os.close(fd)
        raise CollapseLabError(f"{run_path} is being written by another collapse-lab process{who}; wait for it to "
                               "finish or stop it, then run this again") from None
    except OSError:
        os.close(fd)  # a filesystem without flock (some network mounts): nothing to hold
        return
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    _held[key] = fd


def release(run_path: Path) -> None:
    fd = _held.pop(os.path.abspath(lock_path(run_path)), None)
    if fd is not None:
        os.close(fd)  # closing the descriptor drops the lock


def held_elsewhere(run_path: Path) -> str | None:
    """Whether another process holds the run's lock (its description), without taking it."""
    if fcntl is None:
        return None
    lp = lock_path(run_path)
    if os.path.abspath(lp) in _held or not lp.is_file():
        return None
    try:
        fd = os.open(lp, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return f"another collapse-lab process{_holder(fd)}"
    except OSError:
        return None
    finally:
        os.close(fd)  # drops the shared lock just taken, if any
    return None
