"""An ``OSError`` a user can act on, as one line and an exit status: a full disk (with the
space left there and what to do, which depends on what the command was writing), a folder
that cannot be written, a file where a folder belongs, a link loop, a name too long; a
closed pipe ends quietly. Any other ``OSError`` is a bug (``failure`` says so)."""
from __future__ import annotations

import errno
import os
import sys


TRAINS = ("train", "sweep")  # the commands continued with --resume
TRAINS_FIRST = ("figures", "tables", "ladder")  # commands that train what they lack, then write


def os_error_line(e: OSError, command: str | None = "train") -> tuple[str, int] | None:
    """A one-line message for an OSError the user can act on, or None (a bug). ``command``:
    the sub-command that met it (a full disk's advice depends on what it was writing)."""
    where = f" writing {e.filename}" if e.filename else ""
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        what = "the disk is full" if e.errno == errno.ENOSPC else "the disk quota is exceeded"
        free = _free_space(e.filename)
        if command in TRAINS:
            return (f"{what}{where}{free}; complete rounds are kept: free some space there and continue with "
                    "--resume (a store that fills: --keep-local last or none keeps fewer client models)", 1)
        if command in TRAINS_FIRST:
            return (f"{what}{where}{free}; every run it trained is kept: free some space there and run the "
                    "command again", 1)
        return f"{what}{where}{free}; free some space there and run the command again", 1
    if e.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        # a folder the user chose that cannot be written: bad input, as a read-only --store is
        return f"{e.strerror}{where or (' on ' + str(e.filename) if e.filename else '')}; choose a folder you can write", 2
    if e.errno in (errno.ENOTDIR, errno.EEXIST):
        return f"{e.filename}: a file stands where a folder is needed; choose another --store (or --out)", 2
    if e.errno == errno.ELOOP:
        return f"{e.filename}: a symbolic link loop; remove the link", 2
    if e.errno == errno.ENAMETOOLONG:
        return f"{str(e.filename)[:120]}: file name too long; choose a shorter --store, --out or --tag", 2
    return None


def quiet_pipe() -> int:
    """stdout's reader went away: nothing more to say to it (Python would complain at exit)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    return 141


def _free_space(path) -> str:
    """`` (12 kB free there)`` for the disk that holds ``path``, or "" if it cannot be read."""
    from pathlib import Path

    p = Path(str(path)) if path else None
    while p is not None and not p.exists() and p != p.parent:
        p = p.parent
    try:
        st = os.statvfs(p) if p is not None else None
    except OSError:
        return ""
    if st is None:
        return ""
    n = st.f_bavail * st.f_frsize
    size = next(f"{n / d:.0f} {u}" for d, u in ((1 << 30, "GB"), (1 << 20, "MB"), (1 << 10, "kB"), (1, "bytes"))
                if n >= d or u == "bytes")
    return f" ({size} free there)"
