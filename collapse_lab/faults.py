"""Fault injection for the crash tests: ``COLLAPSE_LAB_FAULT=NAME[#N][@SIGNAL]`` sends the
process SIGKILL (or SIGNAL: INT, TERM) at the N-th (default first) time the code passes
``point(NAME)``: a stop at a chosen moment, not after a guessed delay.

Points: ``write`` (an atomic write, after the temporary file is fsynced and before the
rename), ``step:<round>:<client>`` (after a local optimizer step), ``client:<round>:<client>``
(after a client's checkpoint is stored); at start-up, outside a run (``startup``): ``import``
(while the modules load), ``loaded`` (after), ``command`` (the arguments parsed), ``prepared``
(train's runs checked, before training). The engine reads the variable when a run starts
(``Faults.from_env``) and hands the object to the store and the trainer; nothing is read
at import and nothing is kept in module state. Unarmed, ``point`` is one comparison.
"""
from __future__ import annotations

import os
import signal
from typing import Mapping

ENV = "COLLAPSE_LAB_FAULT"


SIGNALS = {"KILL": signal.SIGKILL, "INT": signal.SIGINT, "TERM": signal.SIGTERM}


class Faults:
    def __init__(self, spec: str | None = None):
        self.spec = spec or None
        head, _, sig = (spec or "").partition("@")
        name, _, n = head.partition("#")
        self.name, self.target, self.seen = name, int(n) if n else 1, 0
        self.signal = SIGNALS[sig] if sig in SIGNALS else signal.SIGKILL

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> "Faults":
        return cls(environ.get(ENV))

    def point(self, name: str) -> None:
        if self.spec is None or name != self.name:
            return
        self.seen += 1
        if self.seen == self.target:
            os.kill(os.getpid(), self.signal)


def startup(name: str, environ: Mapping[str, str] = os.environ) -> None:
    """A start-up fault point (outside a run): the variable is read where it is passed."""
    if environ.get(ENV):
        Faults.from_env(environ).point(name)


def no_fault(name: str) -> None:
    """The fault point of code that runs outside a training run."""
