"""Stops: SIGTERM is handled as Ctrl-C is, everywhere a command runs long.

``train`` stops between clients itself (``StopFlag``, set by its handlers). Commands that
drive worker processes (``sweep``, ``figures``, ``tables``) get ``Terminated``, a
``KeyboardInterrupt`` that remembers the signal, so one code path forwards the stop to the
workers, waits for them to store their current client, and exits 130 (SIGINT) or 143
(SIGTERM) with a resume hint.
"""
from __future__ import annotations

import contextlib
import os
import signal
import threading
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


_RECEIVED: list[str] = []


def received() -> str | None:
    """The first stop signal the running command was sent (``sigterm_as_interrupt``), if any."""
    return _RECEIVED[0] if _RECEIVED else None


def _deferred(signum: int, frame) -> bool:
    """Inside an import, send the signal again in 50 ms instead of raising now: an exception
    raised there can abort the process (a pybind11 module's init: ``terminate called after
    throwing ... KeyboardInterrupt``) or be swallowed and leave a broken module."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            t = threading.Timer(0.05, os.kill, (os.getpid(), signum))
            t.daemon = True
            t.start()
            return True
        frame = frame.f_back
    return False


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises ``Terminated`` and SIGINT ``KeyboardInterrupt`` in
    the main thread, and each is noted (``received``): raised inside a lazy import (scipy,
    sklearn), the interrupt can be swallowed half-way and leave a broken module that fails
    later as RecursionError or AttributeError, which is the stop's doing, not a bug."""
    def on_term(signum, frame):
        _RECEIVED.append("SIGTERM")
        if not _deferred(signum, frame):
            raise Terminated()

    def on_int(signum, frame):
        _RECEIVED.append("SIGINT")
        if not _deferred(signum, frame):
            raise KeyboardInterrupt()

    try:
        old = {signal.SIGTERM: signal.signal(signal.SIGTERM, on_term)}
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            old[signal.SIGINT] = signal.signal(signal.SIGINT, on_int)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


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


def install_stop_handlers(stop, say) -> dict:
    """SIGINT/SIGTERM set ``stop`` (a ``training.stops.StopFlag``: the run finishes its current
    client, then stops with a resume hint); a second Ctrl-C stops at once. Returns the
    handlers replaced, for ``restore_handlers``."""
    def handler(signum, frame):
        if stop.is_set():
            raise KeyboardInterrupt
        stop.request(signal.Signals(signum).name)
        say(f"\n{stop.requested} received: finishing the current client, then stopping "
            "(press Ctrl-C again to stop now)")

    old = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            old[sig] = signal.signal(sig, handler)
        except ValueError:  # not the main thread (e.g. some test runners)
            pass
    return old


def restore_handlers(old: dict) -> None:
    for sig, h in old.items():
        signal.signal(sig, h)


class SweepInterrupted(Exception):
    """Ctrl-C or SIGTERM while runs trained (a sweep, the catalogue's commands, train on the
    pool): the runs under way were stopped after their current client. ``signame``: SIGINT or
    SIGTERM (exit status 130 or 143)."""

    def __init__(self, signame: str = "SIGINT"):
        super().__init__(signame)
        self.signame = signame
