"""``--time-limit``: jobs that fit a cluster's wall-clock limit (a SLURM job array chains them).

The limit counts from when the process started (Linux; elsewhere from when this module was
imported); leave the job's own start-up as margin: ``--time-limit 3h50m`` in a 4-hour job. Training stops cleanly after the last round that
fits: a round starts only when the longest round so far (of this run, else of this
process) still ends before the deadline; should a round overrun anyway, the run stops
between clients, as on SIGTERM. Every complete round is kept; the command exits with
``EXIT_TIME_LIMIT`` and prints the command that continues, which is the same command (with
``--resume`` for ``train``). A limit shorter than one round, as estimated before anything
trains, is refused (exit 2).
"""
from __future__ import annotations

import re
import shlex
import sys
import time

from .errors import CollapseLabError

TIME_LIMIT = "time limit"  # the stop's name, where a signal's would be (SIGINT, SIGTERM)
EXIT_TIME_LIMIT = 75  # sysexits.h EX_TEMPFAIL: "try again later": the next job continues

_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
_PART = re.compile(r"(\d+(?:\.\d+)?)([dhms])")


def parse_duration(text: str, option: str = "--time-limit") -> float:
    """Seconds in ``3h50m``, ``90m``, ``1d2h``, ``45s``, ``0.5h`` or plain seconds (``3600``);
    anything else is one line naming the option."""
    s = str(text).strip().lower().replace(" ", "")
    try:
        seconds = float(s)
    except ValueError:
        parts = _PART.findall(s)
        if not parts or "".join(n + u for n, u in parts) != s or len({u for _, u in parts}) < len(parts):
            raise CollapseLabError(f"{option} {text!r}: write a duration such as 3h50m, 90m, 45s or 3600 "
                                   "(seconds)") from None
        seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    if not seconds > 0 or seconds != seconds or seconds == float("inf"):
        raise CollapseLabError(f"{option} {text!r}: give a positive duration such as 3h50m")
    return seconds


_IMPORTED = time.time()


def process_start() -> float:
    """When this process started (``time.time()`` scale): /proc on Linux, else this module's import."""
    try:
        import os

        ticks = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19])  # field 22: starttime
        uptime = float(open("/proc/uptime").read().split()[0])
        return min(_IMPORTED, time.time() - uptime + ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return _IMPORTED


def deadline(limit: str | None) -> float | None:
    """The wall-clock time (``time.time()``) by which a command given ``--time-limit`` stops."""
    return None if limit is None else process_start() + parse_duration(limit)


def human(seconds: float) -> str:
    """A duration as a person reads it; under a second to two significant digits (a digits
    round's 0.04 s is not "0.0 s")."""
    if seconds < 1:
        return f"{seconds:.2g} s"
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.2f} h"


def check_first_round(limit: str, first_round_s: float, what: str, source: str) -> None:
    """Refuse a limit whose time left (after the start-up so far) is shorter than the first
    round, estimated before anything trains: such a job would stop with nothing done."""
    left = deadline(limit) - time.time()
    if left < first_round_s:
        raise CollapseLabError(f"--time-limit {limit} leaves {human(max(left, 0.0))} after start-up, less than one "
                               f"round of {what} (about {human(first_round_s)}, estimated from {source}); "
                               "give a longer limit")


def without_no_train() -> str:
    """The command line as given, less ``--no-train``: the one that trains what it lacked."""
    return " ".join(shlex.quote(a) for a in ["collapse-lab", *(a for a in sys.argv[1:] if a != "--no-train")])


def continue_command(resume: bool = False) -> str:
    """The command line that continues this one (``--resume`` added for ``train``)."""
    args = [a for a in sys.argv[1:] if a != "--overwrite"]
    cmd = " ".join(shlex.quote(a) for a in ["collapse-lab", *args])
    return cmd + (" --resume" if resume and "--resume" not in args else "")
