"""The resumable state of a store's unfinished runs, as a few files of bounded size: what a
machine that will be taken away sends back so that the next one continues each run where it
stopped (``python -m collapse_lab.store.snapshot pack STORE DEST`` / ``unpack DEST STORE``).

Per unfinished run it keeps what a resume reads and nothing else: ``run.json``, the partition,
``metrics.jsonl``, and the latest complete round's global model with
the method's server and per-client state. The rounds in between and every client checkpoint
are recorded as pruned in the copy's ``run.json`` (the record ``store.retention`` keeps), so
the copy is a whole run to ``integrity.first_damage`` and a resume continues it bit for bit
as it would on the first machine. Complete runs are left out: their evidence travels apart.

The files are one tar stream cut into parts of at most ``part_bytes`` (``state.tar.000``,
``.001``, ...), so one large run never breaks a size limit; ``unpack`` joins them.
"""
from __future__ import annotations

import io
import json
import sys
import tarfile
from pathlib import Path

from ..errors import CollapseLabError
from .run_dir import RunDir, find_runs

PART_BYTES = 15 * 2 ** 20
PREFIX = "state.tar."


def resumable(run: RunDir) -> tuple[dict, list[Path]]:
    """The copy's ``run.json`` and the files a resume of ``run`` reads (module docstring)."""
    meta = run.meta
    done = int(meta.get("rounds_complete", 0))
    gone = run.pruned()
    keep_global = {done}  # round 0 too stays behind: a resume reads the latest round alone
    meta = {**meta, "pruned": {"global": sorted(gone["global"] | (set(range(done + 1)) - keep_global)),
                               "local": sorted(gone["local"] | set(range(1, done + 1)))}}
    files = [run.path / "partition.safetensors", run.path / "metrics.jsonl"]
    for r in sorted(keep_global):
        files += [run.global_path(r), run.method_path(r), run.method_path(r, True)]
    return meta, [p for p in files if p.is_file()]


def unfinished(store: Path) -> list[RunDir]:
    """The store's runs that have started and not completed (diverged runs are finished)."""
    return [r for r in find_runs(Path(store)) if r.meta.get("status") not in ("complete", "diverged")]


def pack(store: Path, dest: Path, budget_bytes: int, part_bytes: int = PART_BYTES) -> dict:
    """Write the unfinished runs' resumable state into ``dest`` as parts of at most
    ``part_bytes``, the most advanced runs first, as many as fit in ``budget_bytes``; returns
    the runs packed, those left out (they start over) and the parts."""
    runs = sorted(unfinished(store), key=lambda r: (-int(r.meta.get("rounds_complete", 0)), r.path.name))
    buf, packed, left = io.BytesIO(), [], []
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for run in runs:
            meta, files = resumable(run)
            body = (json.dumps(meta, indent=1, sort_keys=True) + "\n").encode()
            size = len(body) + sum(p.stat().st_size for p in files) + 1024 * (len(files) + 2)
            if buf.tell() + size > budget_bytes:
                left.append(run.path.name)
                continue
            info = tarfile.TarInfo(f"{run.path.name}/run.json")
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
            for p in files:
                tar.add(p, arcname=f"{run.path.name}/{p.relative_to(run.path)}")
            packed.append(run.path.name)
    data = buf.getvalue()
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    parts = []
    from ..files import write_bytes

    for i in range(0, len(data), part_bytes) if packed else []:
        p = dest / f"{PREFIX}{i // part_bytes:03d}"
        write_bytes(p, data[i:i + part_bytes])  # atomic: a full disk leaves no half part
        parts.append(p)
    return {"packed": packed, "left_out": left, "parts": [str(p) for p in parts], "bytes": len(data) if packed else 0}


def unpack(src: Path, store: Path) -> list[str]:
    """Join ``src``'s parts and restore their runs into ``store``; a run already there (this
    machine has it) is left as it is. Returns the runs restored."""
    parts = sorted(Path(src).glob(f"{PREFIX}[0-9][0-9][0-9]"))
    if not parts:
        return []
    data = b"".join(p.read_bytes() for p in parts)
    store = Path(store)
    store.mkdir(parents=True, exist_ok=True)
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
            members = tar.getmembers()
            names = sorted({m.name.split("/")[0] for m in members})
            bad = [m.name for m in members if not m.isfile() or m.name.startswith("/") or ".." in Path(m.name).parts]
            if bad:
                raise CollapseLabError(f"{src}: {bad[0]} is not a run's file; the parts are damaged or not a snapshot")
            todo = [n for n in names if not (store / n).exists()]
            tar.extractall(store, members=[m for m in members if m.name.split("/")[0] in todo], filter="data")
    except tarfile.TarError as e:
        raise CollapseLabError(f"{src}: the state parts do not join into a snapshot ({e}); bring every part back") from None
    return todo


def main(argv: list[str]) -> int:
    if len(argv) == 4 and argv[0] == "pack":
        out = pack(Path(argv[1]), Path(argv[2]), int(argv[3]))
        print(json.dumps(out))
        return 0
    if len(argv) == 3 and argv[0] == "unpack":
        print(json.dumps({"restored": unpack(Path(argv[1]), Path(argv[2]))}))
        return 0
    print("usage: python -m collapse_lab.store.snapshot pack STORE DEST BUDGET_BYTES | unpack SRC STORE", file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except CollapseLabError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    except OSError as e:  # a full disk or a read-only folder: one line
        print(f"error: {e.filename or ''}: {e.strerror or e}; free the disk or choose a writable folder",
              file=sys.stderr)
        sys.exit(2)
