"""Files written atomically (temporary file in the same folder, fsync, rename) with the
umask's modes, and JSON Lines appended and read tolerantly.

A reader never sees a half-written file: either the old content or the new one. No torch
here: the analysis and the store's bookkeeping write files without loading it.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Callable

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


def missing_folders(folder: Path) -> list[Path]:
    """The folders ``mkdir -p folder`` would create, deepest first (a failed write removes
    what it created: no empty output folder is left)."""
    folder, out = Path(folder), []
    while not folder.exists() and folder != folder.parent:
        out.append(folder)
        folder = folder.parent
    return out


def remove_empty(folders: list[Path]) -> None:
    """Remove ``folders`` (deepest first) while they are empty."""
    for d in folders:
        try:
            d.rmdir()
        except OSError:
            return


def naming(e: BaseException, path: Path) -> BaseException:
    """An OSError without a file name (a failed ``write``) as the same error naming ``path``
    (the one-line message says which file met a full disk)."""
    if isinstance(e, OSError) and not e.filename and e.errno is not None:
        named = OSError(e.errno, e.strerror or os.strerror(e.errno), str(path))
        named.__cause__ = e
        return named
    return e


def _atomic(path: Path, write: Callable[[str], None], fault: Callable[[str], None] = no_fault) -> None:
    path = Path(path)
    created = missing_folders(path.parent)
    make_dirs(path.parent)
    tmp = None
    try:
        tmp = temp_file(path.parent, f".{path.name}.", ".tmp")
        write(tmp)
        with open(tmp, "rb+") as f:
            os.fchmod(f.fileno(), file_mode())  # a writer may have made the file anew (safetensors does, 0600)
            os.fsync(f.fileno())
        fault("write")
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    except BaseException as e:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        remove_empty(created)
        named = naming(e, path)
        if named is not e:
            raise named from e
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
