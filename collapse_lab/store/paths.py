"""Names and folders built from user input: they stay inside the store.

A tag (``--tag``) becomes part of a run's folder name and a run name becomes a folder in
the store, so both are checked here before anything is created or removed: no path
separators, no ``.``/``..``, no leading dot or dash, nothing a filesystem cannot hold
(NUL, control characters, more than 255 bytes).
"""
from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

from ..errors import CollapseLabError

MAX_TAG = 64
MAX_NAME_BYTES = 255  # ext4, xfs, btrfs, apfs, NTFS: one path component
_TAG = re.compile(r"[\w.+=,@-]+")  # \w is Unicode: letters and digits of any script, and _


def check_tag(tag: str, flag: str = "--tag") -> str:
    """A tag as part of a folder name, or CollapseLabError naming the option."""
    if not isinstance(tag, str):
        raise CollapseLabError(f"{flag} {tag!r} is not text; give letters, digits or . _ - + = , @")
    if tag == "":
        return tag
    if len(tag) > MAX_TAG:
        raise CollapseLabError(f"{flag} is {len(tag)} characters long; give at most {MAX_TAG}")
    bad = next((c for c in tag if not _TAG.fullmatch(c) or unicodedata.category(c).startswith("C")), None)
    if bad is not None:
        raise CollapseLabError(f"{flag} {tag!r}: the character {bad!r} cannot be part of a run folder name; "
                               "use letters, digits and . _ - + = , @")
    if tag[0] in ".-" or set(tag) <= {"."}:
        raise CollapseLabError(f"{flag} {tag!r} must not start with '.' or '-' (hidden or option-like folder names)")
    return tag


def check_name(name: str, what: str = "run name") -> str:
    """A single folder name inside the store (a run's ``run_name()``)."""
    if (not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name or name.startswith(".")
            or len(name.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES):
        raise CollapseLabError(f"{what} {name[:80]!r} is not a folder name the store can hold (separators, '..', "
                               f"a leading dot or more than {MAX_NAME_BYTES} bytes); shorten or change --tag")
    return name


def child(store: Path, name: str, what: str = "run name") -> Path:
    """``store/name`` for a checked ``name``: a folder directly inside ``store``."""
    return Path(store) / check_name(name, what)


def _first_existing(path: Path) -> Path:
    p = Path(os.path.abspath(path))
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def check_store_for_writing(store, flag: str = "--store", smoke_ok: bool = False) -> Path:
    """A store folder training may write: not empty text, no file where a folder must be,
    writable (a read-only mount or missing permission is one line before anything trains),
    and not a smoke store unless ``smoke_ok`` (``check_smoke``)."""
    s = str(store)
    if not smoke_ok and s.strip() and "\0" not in s:
        check_smoke(s, False, flag)
    if s.strip() == "":
        raise CollapseLabError(f"{flag} is empty; name the folder of the run store (default: checkpoints)")
    return check_output_folder(s, flag)


def check_output_folder(folder, flag: str = "--out") -> Path:
    """A folder a command will write (made if missing): no file where a folder must be, and
    writable, checked before any work (a read-only mount or missing permission is one line)."""
    s = str(folder)
    if s.strip() == "":
        raise CollapseLabError(f"{flag} is empty; name a folder")
    if "\0" in s:
        raise CollapseLabError(f"{flag} contains a NUL character; name a folder")
    path = Path(s)
    cur = Path(os.path.abspath(path))
    chain = []
    while cur != cur.parent:
        chain.append(cur)
        cur = cur.parent
    for p in reversed(chain):  # from the root down: the first component that is not a folder
        try:
            st_is_dir = p.is_dir()
            exists = p.exists() or p.is_symlink()
        except OSError as e:  # a symlink loop, a name too long
            raise CollapseLabError(f"{flag} {s}: {p} cannot be used ({e.strerror or type(e).__name__})") from None
        if not exists:
            break
        if not st_is_dir:
            raise CollapseLabError(f"{flag} {s}: {p} is a file, not a folder; choose another {flag}")
    base = _first_existing(path)
    if not os.access(base, os.W_OK | os.X_OK):
        raise CollapseLabError(f"{flag} {s}: {base} is not writable (read-only or no permission); "
                               f"choose another {flag}")
    if path.is_dir():  # root ignores permissions, a read-only mount does not: try it
        check_writable(path, f"{flag} {s}", f"choose another {flag}")
    return path


def check_writable(folder: Path, what: str, fix: str) -> None:
    """One line (CollapseLabError) where an existing folder cannot take a new file: a
    read-only mount or a missing permission, tried with a file made and removed (root
    ignores permission bits, a read-only mount does not)."""
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(prefix=".write-check.", dir=folder)
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise CollapseLabError(f"{what} is not writable ({e.strerror}); {fix}") from None


def check_store_for_reading(store, flag: str = "--store") -> Path:
    """A store the analyses read: it must exist and be a folder."""
    s = str(store)
    if s.strip() == "":
        raise CollapseLabError(f"{flag} is empty; name the folder of the run store (default: checkpoints)")
    path = Path(s)
    try:
        if not path.exists():
            raise CollapseLabError(f"{flag} {s}: no such folder; train into it first (collapse-lab train --store {s}) "
                                   "or name an existing store")
        if not path.is_dir():
            raise CollapseLabError(f"{flag} {s} is a file, not a run store folder")
    except OSError as e:
        raise CollapseLabError(f"{flag} {s} cannot be read ({e.strerror or type(e).__name__})") from None
    return path


def is_run_folder(path: Path) -> bool:
    """A real folder (not a symlink) holding a run.json: what ``--overwrite`` may replace."""
    path = Path(path)
    return path.is_dir() and not path.is_symlink() and (path / "run.json").is_file()



SMOKE_MARK = "SMOKE"  # the file that makes a store a smoke store (figures/tables --smoke)


def check_smoke(store, smoke: bool, flag: str = "--store") -> Path:
    """Smoke runs and real runs never share a store: a smoke store (it holds ``SMOKE``) is
    refused as the real store, and a store of real runs is refused to ``--smoke``. With
    ``smoke`` the store is marked (created if need be) before anything trains."""
    path = Path(store)
    marked = (path / SMOKE_MARK).is_file()
    if marked and not smoke:
        raise CollapseLabError(f"{flag} {store} is a smoke store (figures/tables --smoke wrote it): its runs are "
                               "one-round stand-ins; give the store of real runs, or add --smoke")
    if smoke and not marked:
        if path.is_dir() and any(is_run_folder(p) for p in path.iterdir()):
            raise CollapseLabError(f"{flag} {store} holds real runs; --smoke keeps its runs in a store of its own "
                                   f"(default: checkpoints-smoke): name an empty or new folder")
        check_store_for_writing(path, flag, smoke_ok=True)
        path.mkdir(parents=True, exist_ok=True)
        from ..files import write_bytes

        write_bytes(path / SMOKE_MARK, b"smoke runs: one round of a few local steps (collapse-lab --smoke)\n")
    return path


# -- the store's folders beside its runs: the sweep's logs and the account of SLURM jobs --

def sweep_logs(store) -> Path:
    """``<store>/.sweep-logs``: a local sweep's worker logs (a failed run's traceback)."""
    return Path(store) / ".sweep-logs"


def slurm_records(store) -> Path:
    """``<store>/.slurm``: what was submitted to SLURM and what each job did (``sweep.slurm``)."""
    return Path(store) / ".slurm"


def slurm_submission(store, run: str) -> Path:
    """The latest submission record of ``run``."""
    return slurm_records(store) / "runs" / f"{run}.json"


def slurm_job_record(store, run: str, job: str) -> Path:
    """What job ``job`` wrote of ``run`` (its one writer)."""
    return slurm_records(store) / "runs" / f"{run}.job-{job}.json"


def slurm_job_folder(store, job: str) -> Path:
    """A job's own log folder (``%j``: submitit's placeholder for the job id)."""
    return slurm_records(store) / "jobs" / str(job)


def slurm_submit_lock(store) -> Path:
    """Held while a sweep submits: two sweeps submitting to one store go one after the other."""
    return slurm_records(store) / "submit.lock"
