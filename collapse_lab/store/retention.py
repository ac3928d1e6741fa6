"""Retention (``--keep-global``, ``--keep-local``) as a view, never a trap (issue 47).

A run records in run.json which rounds' files it deleted on purpose, ``pruned``:
``{"global": [rounds], "local": [rounds]}``, written *before* the files go (a crash in
between leaves files that are listed as pruned and are removed by the next prune; never a
missing file that is not listed). So whether a file is expected follows from the record,
not from the policy of the day: a run trained under ``last`` and extended under ``all``,
or under ``none`` and then ``all``, reopens, extends and analyses; a deleted file that is
not listed is damage. Runs stored before the record existed are read by the policy they
recorded (``legacy_pruned``), and the record is written the first time they are pruned.

A policy given on a resume that differs from the run's applies to the rounds trained from
then on (``retention_from``): rounds up to the resume point keep what the earlier policy
kept, and ``change_note`` says so in one line. Pruning holds the run's prune lock
exclusively; a reader holds it shared while it opens and loads a checkpoint
(``read_lock``), so it never reads a file the writer is deleting and a round that is gone
is named as pruned, not missing.
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ..errors import CollapseLabError

try:
    import fcntl
except ImportError:  # Windows: no advisory locks
    fcntl = None


def parse_keep(spec: str, words: tuple[str, ...]) -> tuple[str, int] | None:
    """``all``/``last``/``none`` or ``every:N`` (N written in ASCII digits, >= 1)."""
    if spec in words:
        return spec, 0
    if spec.startswith("every:"):
        n = spec.split(":", 1)[1]
        # str.isdigit() admits '²' and '٣' (int() refuses the first, reads the second as 3)
        if n.isascii() and n.isdigit() and int(n) >= 1:
            return "every", int(n)
    return None


def parse_keep_local(spec: str) -> tuple[str, int]:
    """--keep-local: which client checkpoints stay once later rounds are complete."""
    keep = parse_keep(spec, ("all", "last", "none"))
    if keep is None:
        raise CollapseLabError(f"--keep-local {spec!r}: use all, last, none or every:N with N >= 1")
    return keep


def parse_keep_global(spec: str) -> tuple[str, int]:
    """--keep-global: which rounds keep their global model once later rounds are complete."""
    keep = parse_keep(spec, ("all", "last"))
    if keep is None:
        raise CollapseLabError(f"--keep-global {spec!r}: use all, last or every:N with N >= 1 (the last round is "
                               "always kept)")
    return keep


def keeps_global(keep: tuple[str, int], q: int, last: int, final_round: int) -> bool:
    """Whether round q keeps its global model once round ``last`` is complete (the latest
    complete round always does: a resume starts from it)."""
    mode, n = keep
    return mode == "all" or q == last or q == final_round or (mode == "every" and q % n == 0)


def keeps_local(keep: tuple[str, int], q: int, last: int, final_round: int) -> bool:
    """Whether round q keeps its client checkpoints once round ``last`` is complete."""
    mode, n = keep
    return (mode == "all" or (mode == "every" and (q % n == 0 or q == final_round))
            or (mode == "last" and q == last))


def legacy_pruned(meta: dict, done: int) -> dict[str, list[int]]:
    """What a run stored without the ``pruned`` record deleted: what its recorded policies
    deleted by round ``done``."""
    final = int(meta.get("rounds", done))
    kg = parse_keep_global(str(meta.get("keep_global", "all")))
    kl = parse_keep_local(str(meta.get("keep_local", "all")))
    return {"global": [q for q in range(done + 1) if not keeps_global(kg, q, done, final)],
            "local": [q for q in range(1, done + 1) if not keeps_local(kl, q, done, final)]}


def pruned(meta: dict) -> dict[str, set[int]]:
    """The rounds whose global models (``global``) and client checkpoints (``local``) the
    run deleted on purpose."""
    rec = meta.get("pruned")
    if not isinstance(rec, dict):
        rec = legacy_pruned(meta, int(meta.get("rounds_complete", 0)))
    return {k: {int(q) for q in rec.get(k, [])} for k in ("global", "local")}


def lock_file(run_path: Path) -> Path:
    run_path = Path(run_path)
    return run_path.parent / ".locks" / f"{run_path.name}.prune"


def make_lock_file(run_path: Path) -> None:
    """The writer creates the prune lock when it takes its run (``store.lock.acquire``), so
    a reader finds it before the first prune."""
    p = lock_file(run_path)
    p.parent.mkdir(parents=True, exist_ok=True)
    os.close(os.open(p, os.O_RDWR | os.O_CREAT, 0o666))


@contextlib.contextmanager
def _flock(run_path: Path, exclusive: bool):
    p = lock_file(run_path)
    try:
        if exclusive:  # the writer makes its lock where none is yet (the store's .locks/), never deletes unlocked
            p.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(p, os.O_RDWR | os.O_CREAT if exclusive else os.O_RDONLY, 0o666)
    except FileNotFoundError:
        if exclusive:
            raise CollapseLabError(f"{p}: the prune lock cannot be made; nothing is deleted without it: run the "
                                   "command again") from None
        yield  # a reader of a run no writer has held since retention was recorded: nothing can prune under it
        return
    except OSError as e:  # fails closed: neither a writer nor a reader goes on unlocked
        raise CollapseLabError(f"{p}: the prune lock cannot be opened ({e.strerror or e}); collapse-lab neither "
                               "deletes nor reads checkpoints without it: make the store's .locks/ folder "
                               "readable and writable") from None
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            except OSError as e:
                if exclusive:  # a pruning writer never deletes unlocked (it could not have started: acquire refuses)
                    raise CollapseLabError(no_flock(Path(run_path).parent, e)) from None
                # a reader: no writer can hold a run on this file system (acquire refuses one), so nothing
                # can be pruned under it, and reading needs no lock
        yield
    finally:
        os.close(fd)


def no_flock(folder: Path, e: OSError) -> str:
    """The line for a file system that refuses file locks: one writer per run rests on them."""
    return (f"{folder}: this file system refuses file locks (flock: {e.strerror or e}); collapse-lab keeps one writer "
            "per run with them, so it writes nothing here: use a store on a local disk or one with flock")



def read_lock(run_path: Path):
    """Held while a reader opens and loads one checkpoint: the writer cannot delete it
    meanwhile (it waits, at most one load)."""
    return _flock(run_path, exclusive=False)


def prune(run, r: int, keep_global: tuple[str, int], keep_local: tuple[str, int], final_round: int) -> None:
    """Apply both policies after round r completes: record what goes, then delete it, under
    the prune lock. Rounds before the run's ``retention_from`` keep what they have."""
    meta = run.meta
    since = int(meta.get("retention_from", 0))
    gone, on_disk = pruned(meta), run.rounds_on_disk()
    drop_g = {q for q in on_disk if since <= q < r and not keeps_global(keep_global, q, r, final_round)}
    drop_l = {q for q in on_disk if max(since, 1) <= q and not keeps_local(keep_local, q, r, final_round)
              and any(run.round_dir(q).glob("client_*.safetensors"))}
    with _flock(run.path, exclusive=True):
        if not (drop_g <= gone["global"] and drop_l <= gone["local"]) or not isinstance(meta.get("pruned"), dict):
            run.update(pruned={"global": sorted(gone["global"] | drop_g), "local": sorted(gone["local"] | drop_l)})
        for q in drop_g:
            run.global_path(q).unlink(missing_ok=True)
            run.method_path(q).unlink(missing_ok=True)
        for q in drop_l:
            for f in run.round_dir(q).glob("client_*.safetensors"):
                f.unlink()
        # per-client method state follows the client checkpoints, but the latest round's stays
        for q in drop_l | {r - 1}:
            if 0 < q < r and not any(run.round_dir(q).glob("client_*.safetensors")):
                run.method_path(q, True).unlink(missing_ok=True)
        for q in drop_g | drop_l:
            d = run.round_dir(q)
            if d.is_dir() and not any(d.iterdir()):
                d.rmdir()


def forget_after(meta: dict, r: int) -> dict:
    """The ``pruned`` record once rounds after r are discarded (a resume rewrites them)."""
    gone = pruned(meta)
    return {k: sorted(q for q in v if q <= r) for k, v in gone.items()}


def change_note(name: str, meta: dict, keep_global: str, keep_local: str, start: int) -> str | None:
    """One line when a resume changes the run's policies: they apply to rounds trained from
    now on; rounds 0..start keep what the earlier ones kept."""
    changed = _changes(meta, keep_global, keep_local)
    if not changed:
        return None
    return (f"{name}: {' and '.join(changed)} applies to the rounds trained from now on ({start + 1} on); "
            f"rounds 0..{start} keep what they have (nothing stored is deleted by the change)")


def _changes(meta: dict, keep_global: str, keep_local: str) -> list[str]:
    old_g, old_l = str(meta.get("keep_global", "all")), str(meta.get("keep_local", "all"))
    return [f"--keep-{w} {new} (was {old})" for w, new, old in (("global", keep_global, old_g),
                                                                 ("local", keep_local, old_l)) if new != old]


def skip_note(name: str, meta: dict, keep_global: str, keep_local: str) -> str | None:
    """One line when a complete run is reopened (skipped) under other policies: nothing is
    deleted from it; they would apply to rounds an extension trains."""
    changed = _changes(meta, keep_global, keep_local)
    if not changed:
        return None
    return (f"{name}: complete; {' and '.join(changed)} is not applied to its stored rounds (nothing is deleted); "
            "it applies to the rounds an extension (--resume --rounds N) trains")


def check_readable_round(run, r: int, client: int | None, advice: str = "") -> None:
    """Inside ``read_lock``: a round whose file the run deleted on purpose is named as
    pruned (with the policy and the rounds that keep it), not as missing or damaged;
    ``advice``: what the calling command offers (only options it has), after the rounds."""
    meta = run.meta
    kind = "global" if client is None else "local"
    if r in pruned(meta)[kind]:
        have = [q for q in run.rounds_on_disk() if (run.global_path(q) if client is None else run.client_path(q, client)).is_file()]
        what = "global model" if client is None else f"client {client}'s checkpoint"
        raise CollapseLabError(f"{run.path.name}: round {r}'s {what} was not kept (pruned by --keep-{kind} as the run "
                               f"went on, not damaged); rounds that have it: {have or 'none'}" + (
                                   f": {advice}" if advice else ""))
