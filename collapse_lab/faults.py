"""Fault injection for the crash tests: ``COLLAPSE_LAB_FAULT=NAME[#N]`` SIGKILLs the process
at the N-th (default first) time the code passes ``point(NAME)``.

Points: ``write`` (an atomic write, after the temporary file is fsynced and before the
rename), ``step:<round>:<client>`` (after a local optimizer step), ``client:<round>:<client>``
(after a client's checkpoint is stored). Unset, ``point`` is one dictionary lookup.
"""
from __future__ import annotations

import os
import signal

_SPEC = os.environ.get("COLLAPSE_LAB_FAULT")
_NAME, _, _N = (_SPEC or "").partition("#")
_TARGET = int(_N) if _N else 1
_seen = 0


def point(name: str) -> None:
    global _seen
    if _SPEC is None or name != _NAME:
        return
    _seen += 1
    if _seen == _TARGET:
        os.kill(os.getpid(), signal.SIGKILL)
