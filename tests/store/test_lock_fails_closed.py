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
