"""The checkpoint writer's thread: training goes on while a round's checkpoints reach the disk."""
from __future__ import annotations

from typing import Callable


class AsyncWriter:
    """Writes files on one background thread, in submission order, so training goes on
    while a checkpoint reaches the disk. ``flush`` waits for everything submitted and
    re-raises the first error (a full disk, say); at most ``depth`` writes wait, so a disk
    slower than training holds training back instead of filling memory."""

    def __init__(self, depth: int = 4):
        import queue
        import threading

        self._q: "queue.Queue" = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None
        self.busy_seconds = 0.0  # time the thread spent writing
        self._thread = threading.Thread(target=self._run, name="collapse-lab-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import time

        while True:
            job = self._q.get()
            try:
                if job is None:
                    return
                if self._error is None:
                    t0 = time.perf_counter()
                    job()
                    self.busy_seconds += time.perf_counter() - t0
            except BaseException as e:  # kept for the training thread to raise
                self._error = e
            finally:
                self._q.task_done()

    def submit(self, job: Callable[[], None]) -> None:
        self._raise()
        self._q.put(job)

    def flush(self) -> None:
        self._q.join()
        self._raise()

    def close(self) -> None:
        """Finish pending writes and stop the thread (errors are raised by ``flush``)."""
        if self._thread.is_alive():
            self._q.put(None)
            self._thread.join()

    def _raise(self) -> None:
        if self._error is not None:
            e, self._error = self._error, None
            raise e
