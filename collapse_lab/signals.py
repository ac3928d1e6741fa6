"""Stops: SIGTERM is handled as Ctrl-C is, everywhere a command runs long.

``train`` stops between clients itself (``StopFlag``, set by its handlers). Commands that
drive worker processes (``sweep``, ``figures``, ``tables``) get ``Terminated``, a
``KeyboardInterrupt`` that remembers the signal, so one code path forwards the stop to the
workers, waits for them to store their current client, and exits 130 (SIGINT) or 143
(SIGTERM) with a resume hint.
"""
from __future__ import annotations

import contextlib
import signal
from typing import Iterator


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where SIGINT would raise KeyboardInterrupt."""

    signame = "SIGTERM"


def signame_of(e: BaseException) -> str:
    return getattr(e, "signame", "SIGINT")


def exit_status(signame: str) -> int:
    """130 for SIGINT, 143 for SIGTERM, 75 for ``--time-limit`` (``timelimit``)."""
    from .timelimit import EXIT_TIME_LIMIT, TIME_LIMIT

    return {"SIGTERM": 143, TIME_LIMIT: EXIT_TIME_LIMIT}.get(signame, 130)


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises ``Terminated`` in the main thread."""
    def handler(signum, frame):
        raise Terminated()

    try:
        old = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def die_with_parent() -> None:
    """Linux: this process gets SIGTERM when the process that started it dies (even by
    SIGKILL), so a sweep's workers are never left training on their own."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass
