"""One writer per run: an advisory lock on ``<store>/.locks/<run>.lock``.

``fcntl.flock`` locks belong to the open file and the kernel drops them when the process
dies (SIGKILL, a crash, a reboot), so a stale lock never blocks; the lock file itself stays
(removing it could let two processes lock two different files of one name). The lock sits
beside the run folder, not in it: the folder is created by a rename and replaced by
``--overwrite``. A process takes a run's lock once; taking it again is a no-op until
``release``.

Across hosts (a store on a shared file system, jobs of a cluster): Linux implements flock
on NFS with the server's byte-range locks, so the lock holds between nodes there; the
holder writes its pid, host and SLURM job into the file, so a refusal names where the
writer runs. On a file system whose flock is node-local (Lustre mounted ``localflock``),
the SLURM backend's submission records still refuse a run whose job is queued or running
(``sweep.slurm.held``).
"""
from __future__ import annotations

import contextlib
import os
import socket
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
    """Who holds the lock, as it wrote itself: pid, host and SLURM job (``_me``)."""
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        words = os.read(fd, 256).decode(errors="replace").split()
    except OSError:
        return ""
    if not words or not words[0].isdigit():
        return ""
    host = f" on {words[1]}" if len(words) > 1 else ""
    job = f", SLURM job {words[2]}" if len(words) > 2 else ""
    return f" (pid {words[0]}{host}{job})"


def _me() -> bytes:
    """What a holder writes in the lock file: its pid and host (a store on a shared file
    system is locked from several hosts), and its SLURM job if it is one."""
    # the job as squeue shows it: A_i for a task of a job array (SLURM_JOB_ID is then a number
    # squeue does not show, and for task 0 the whole array's)
    array, task = os.environ.get("SLURM_ARRAY_JOB_ID"), os.environ.get("SLURM_ARRAY_TASK_ID")
    job = f"{array}_{task}" if array and task else os.environ.get("SLURM_JOB_ID", "")
    return f"{os.getpid()} {socket.gethostname()}{' ' + job if job else ''}".encode()


def acquire(run_path: Path) -> None:
    """Take the run's lock or raise CollapseLabError naming the process that holds it."""
    if fcntl is None:
        return
    lp = lock_path(run_path)
    key = os.path.abspath(lp)
    if key in _held:
        return
    from ..files import missing_folders, remove_empty

    created = missing_folders(lp.parent) + ([] if lp.exists() else [lp])
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
    except OSError as e:  # a file system without flock (some network mounts): refused, never written unlocked
        os.close(fd)
        if created and created[-1] == lp:
            lp.unlink(missing_ok=True)
        remove_empty([d for d in created if d != lp])
        from .retention import no_flock

        raise CollapseLabError(no_flock(run_path.parent, e)) from None
    os.ftruncate(fd, 0)
    os.write(fd, _me())
    _held[key] = fd
    from .retention import make_lock_file

    make_lock_file(run_path)  # readers find the prune lock before the first prune


def release(run_path: Path) -> None:
    fd = _held.pop(os.path.abspath(lock_path(run_path)), None)
    if fd is not None:
        os.close(fd)  # closing the descriptor drops the lock


def held_here(run_path: Path) -> bool:
    """Whether this process holds the run's lock."""
    return os.path.abspath(lock_path(run_path)) in _held


UNCHECKED = "cannot be checked"  # in held_elsewhere's answer where the lock could not be tried


def held_elsewhere(run_path: Path) -> str | None:
    """Whether another process holds the run's lock (its description), without taking it.
    Fails closed: a lock file that cannot be opened or tried counts as held (its description
    says ``UNCHECKED``), so a running run is never taken for an interrupted one."""
    if fcntl is None:
        return None
    lp = lock_path(run_path)
    if os.path.abspath(lp) in _held or not lp.is_file():
        return None
    try:
        fd = os.open(lp, os.O_RDONLY)
    except OSError as e:
        return f"a process unknown (its lock {lp} {UNCHECKED}: {e.strerror or e})"
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return f"another collapse-lab process{_holder(fd)}"
    except OSError as e:
        return f"a process unknown (its lock {lp} {UNCHECKED}: flock: {e.strerror or e})"
    finally:
        os.close(fd)  # drops the shared lock just taken, if any
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


@contextlib.contextmanager
def store_lock(path: Path):
    """Hold an exclusive lock on ``path`` for the block, waiting for another holder (a
    second sweep submitting to the same store: ``sweep.slurm.submit``)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError as e:  # fail closed: two submitters must not write one store's records at once
                from .retention import no_flock

                raise CollapseLabError(no_flock(Path(path).parent, e)) from None
        yield
    finally:
        os.close(fd)
