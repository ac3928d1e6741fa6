"""The background checkpoint writer (io.AsyncWriter): order kept, errors reported, nothing
written after a failed write."""
import threading

import pytest

from collapse_lab.training.writer import AsyncWriter


def test_async_writer_keeps_order_and_reports_errors():
    w = AsyncWriter(depth=2)
    done, gate = [], threading.Event()
    w.submit(lambda: (gate.wait(5), done.append(1)))
    w.submit(lambda: done.append(2))
    assert done == []  # the training thread went on while the first write waited
    gate.set()
    w.flush()
    assert done == [1, 2]

    def fail():
        raise OSError(28, "No space left on device")

    w.submit(fail)
    w.submit(lambda: done.append(3))  # skipped: nothing is written after a failed write
    with pytest.raises(OSError, match="No space left"):
        w.flush()
    assert done == [1, 2]
    w.close()
