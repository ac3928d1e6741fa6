"""The checkpoint files of other code under a folder: the entries, the files a pattern
(``{round}``, ``{client}``, ``*``) names, and the state dict in each file, read with
``torch.load(weights_only=True)``: tensors and plain containers only; a checkpoint that
needs arbitrary code to unpickle is refused, never run."""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from ..errors import CollapseLabError

PLACE = {"round": r"(?P<round>\d+)", "client": r"(?P<client>\d+)"}


def state_of(path: Path, key: str | None) -> dict:
    """The state dict in a checkpoint file: the file itself when it is one (name -> tensor),
    else the entry ``key`` of it (``a.b`` for a nested one), else its ``state_dict``/``model`` entry."""
    import torch

    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except KeyboardInterrupt:
        raise
    except Exception as e:  # noqa: BLE001 (any file: a zip of other things, text, a truncated pickle)
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CollapseLabError(f"{path}: not a checkpoint of tensors that loads without running code "
                               f"({first.split('. ')[0][:120]}); save model.state_dict() with torch.save") from None
    for part in (key.split(".") if key else []):
        if not isinstance(obj, dict) or part not in obj:
            raise CollapseLabError(f"{path}: no entry {part!r} (--key {key}); it has: "
                                   f"{', '.join(map(str, obj)) if isinstance(obj, dict) else type(obj).__name__}")
        obj = obj[part]
    if isinstance(obj, dict) and obj and not all(isinstance(v, torch.Tensor) for v in obj.values()) and not key:
        for name in ("state_dict", "model", "net"):
            if isinstance(obj.get(name), dict):
                obj = obj[name]
                break
    if not isinstance(obj, dict) or not obj or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                                       for k, v in obj.items()):
        raise CollapseLabError(f"{path}: holds no state dict (name -> tensor); name the entry that does with --key")
    return dict(obj)


def entries_under(src: Path) -> list[tuple[Path, str]]:
    """Every entry under ``src`` with its kind (``file``, ``link``, ``folder``, ``other``:
    a FIFO, a socket, a device), following symbolic links to folders (each real folder once)."""
    out, seen = [], set()
    for root, dirs, files in os.walk(src, followlinks=True):
        real = os.path.realpath(root)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        for name in files:
            p = Path(root) / name
            kind = "link" if p.is_symlink() else "file" if stat.S_ISREG(os.lstat(p).st_mode) else "other"
            out.append((p, kind))
        out += [(Path(root) / d, "folder") for d in dirs]
    return sorted(out, key=lambda t: t[0].relative_to(src).as_posix())


def find(src: Path, pattern: str, flag: str) -> list[tuple[dict, Path]]:
    """Files under ``src`` matching ``pattern`` (``{round}``, ``{client}`` placeholders; ``*``
    as in a shell), with the numbers the placeholders took. What the import would otherwise
    drop is refused, naming the files: a match that is a link, a folder, a FIFO or another
    non-file, and two files for one round (and client), e.g. ``round_1/`` and ``round_01/``."""
    rx = re.escape(pattern).replace(r"\*", "[^/]*")
    for k, v in PLACE.items():
        rx = rx.replace(re.escape("{" + k + "}"), v)
    out, by_key = [], {}
    for p, kind in entries_under(src):
        m = re.fullmatch(rx, p.relative_to(src).as_posix())
        if not m:
            continue
        if kind != "file":
            what = {"link": "a symbolic link (import reads real files: copy the target in)",
                    "folder": "a folder", "other": "not a regular file (a FIFO, socket or device)"}[kind]
            raise CollapseLabError(f"{flag} {pattern}: {p} matches but is {what}; nothing was imported")
        key = {k: int(v) for k, v in m.groupdict().items()}
        ident = tuple(sorted(key.items()))
        if ident and ident in by_key:  # no placeholder: the caller names the files matched
            raise CollapseLabError(f"{flag} {pattern}: two files for {', '.join(f'{k} {v}' for k, v in ident) or 'one run'}: "
                                   f"{by_key[ident]} and {p}; remove one; nothing was imported")
        by_key[ident] = p
        out.append((key, p))
    return out


def matched_files(src: Path, global_pattern: str, client_pattern, round_: int):
    """The global models' files by round, the clients' by round and client, and the rounds
    after the initial model; a pattern that matches nothing usable is one line."""
    globals_ = {(m.get("round", round_)): p for m, p in find(src, global_pattern, "--global-files")}
    if not globals_:
        raise CollapseLabError(f"--global-files {global_pattern}: no file under {src} matches it")
    if "{round}" not in global_pattern and len(globals_) > 1:
        raise CollapseLabError(f"--global-files {global_pattern} matches {len(globals_)} files; put {{round}} where the "
                               "round number is, or name one file")
    per_round: dict[int, dict[int, Path]] = {}
    for m, p in find(src, client_pattern, "--client-files") if client_pattern else []:
        if "client" not in m:
            raise CollapseLabError(f"--client-files {client_pattern}: put {{client}} where the client number is")
        per_round.setdefault(m.get("round", round_), {})[m["client"]] = p
    if client_pattern and not per_round:  # asked for and silently absent, the run would have no local models
        raise CollapseLabError(f"--client-files {client_pattern}: no file under {src} matches it; correct the pattern, or "
                               "leave --client-files out to import the global models alone")
    rounds = sorted(r for r in globals_ if r > 0)
    if not rounds:
        raise CollapseLabError(f"--global-files {global_pattern}: only the initial model (round 0) under {src}; a run "
                               "needs the global model of at least one round")
    orphans = sorted(set(per_round) - set(globals_))
    if orphans:
        raise CollapseLabError(f"--client-files {client_pattern}: clients of round {orphans[0]}, which has no global model "
                               f"(--global-files {global_pattern})")
    return globals_, per_round, rounds
