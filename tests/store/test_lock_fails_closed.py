"""Locks fail closed: on a file system that refuses flock nothing is written unlocked (one
writer per run rests on the lock), one line names it, exit 2."""
from __future__ import annotations

import errno
import fcntl

from tests.fixtures import invoke, tiny_train_args


def test_a_file_system_without_flock_is_one_line_and_nothing_written(tmp_path, monkeypatch):
    def refuse(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", refuse)
    store = tmp_path / "ck"
    res = invoke("train", *tiny_train_args(epochs=1, rounds=1, clients=3, alpha="0.5"), "--store", store)
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "this file system refuses file locks (flock: No locks available)" in lines[0], res.stderr
    assert not store.exists() or not list(store.rglob("*")), sorted(store.rglob("*"))


def _stopped_run(tmp_path):
    """A run whose run.json says ``running`` and whose lock file exists (a writer that took it)."""
    from collapse_lab.store import lock
    from collapse_lab.store.run_dir import RunDir

    run = tmp_path / "ck" / "r"
    run.mkdir(parents=True)
    (run / "run.json").write_text('{"status": "running", "rounds_complete": 1, "config": {}}')
    lock.acquire(run)
    lock.release(run)
    return run, RunDir(run)


def test_a_lock_that_cannot_be_tried_counts_as_held_so_a_run_is_never_called_interrupted(tmp_path, monkeypatch):
    from collapse_lab.store import lock

    run, rd = _stopped_run(tmp_path)
    assert lock.held_elsewhere(run) is None and rd.status == "interrupted"  # tried: nobody holds it

    def refuse(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", refuse)
    who = lock.held_elsewhere(run)
    assert who is not None and lock.UNCHECKED in who and "No locks available" in who
    assert rd.status == "running"
    monkeypatch.undo()
    real_open = lock.os.open
    monkeypatch.setattr(lock.os, "open", lambda p, *a: (_ for _ in ()).throw(PermissionError(errno.EACCES, "Permission denied"))
                        if str(p).endswith(".lock") else real_open(p, *a))
    assert lock.UNCHECKED in lock.held_elsewhere(run) and rd.status == "running"


def test_the_prune_lock_fails_closed_for_the_writer_and_the_reader(tmp_path, monkeypatch):
    import pytest

    from collapse_lab.errors import CollapseLabError
    from collapse_lab.store import retention

    run = tmp_path / "ck" / "r"
    run.mkdir(parents=True)
    with retention.read_lock(run):  # no lock file: no writer has recorded retention, reading is safe
        pass
    retention.make_lock_file(run)
    real_open = retention.os.open

    def refuse(p, *a):
        if str(p).endswith(".prune"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(p, *a)

    monkeypatch.setattr(retention.os, "open", refuse)
    for exclusive in (True, False):
        with pytest.raises(CollapseLabError, match="the prune lock cannot be opened \\(Permission denied\\)"):
            with retention._flock(run, exclusive):
                raise AssertionError("went on without the lock")


def test_waiting_on_a_run_whose_lock_cannot_be_tried_ends_with_its_failure(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from collapse_lab.catalogue import busy
    from collapse_lab.store import lock

    run, _ = _stopped_run(tmp_path)
    cfg = SimpleNamespace(run_name=lambda: "r", rounds=2)
    monkeypatch.setattr("collapse_lab.store.run_path", lambda store, c: run)
    monkeypatch.setattr(fcntl, "flock", lambda fd, op: (_ for _ in ()).throw(OSError(errno.ENOLCK, "No locks")))
    said = []
    failed = busy.wait_for(tmp_path / "ck", [cfg], said.append, poll=0.0)
    assert [f["run"] for f in failed] == ["r"] and lock.UNCHECKED in failed[0]["error"]
    assert said == ["0 of 1 run(s) the other process trained are complete"]
