"""Stopping a pool never waits on an idle worker: a worker blocked on its input exits when
the pool stops (the end of its input), instead of being killed after the wait."""
from __future__ import annotations

import os
import signal

import pytest

from collapse_lab.sweep.backends import _stop_workers, _Worker

pytestmark = pytest.mark.slow  # a worker process


def test_an_idle_worker_exits_on_stop_instead_of_being_killed(tmp_path):
    w = _Worker(tmp_path, 1, dict(os.environ), tmp_path / "worker.log")
    try:
        assert w.unit is None and w.proc.poll() is None  # idle: waiting for a unit
        _stop_workers([w], wait=60)  # before the fix: the wait ran out and the worker was killed
        assert w.proc.returncode is not None and w.proc.returncode != -signal.SIGKILL
    finally:
        w.close()
