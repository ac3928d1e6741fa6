"""What each SLURM job of a sweep asks for (``--slurm-*``, docs/sweeps.md), checked without
SLURM, and written as sbatch's options: one mapping for ``sbatch --test-only`` and the script
submitit writes."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..errors import CollapseLabError


@dataclass(frozen=True)
class SlurmOptions:
    """What each job asks SLURM for (docs/sweeps.md has the defaults and why)."""
    partition: str | None = None  # None: the cluster's default partition
    account: str | None = None
    qos: str | None = None
    gpus: int = 0  # GPUs per job
    cpus: int = 2  # CPUs per job; the job trains with this many threads
    mem: str | None = None  # e.g. 16G; None: the cluster's default
    time: str = "4h"  # the job's time limit (--time)
    extra: tuple = ()  # (key, value): --slurm-option key=value, any other sbatch option
    max_requeues: int = 5  # requeues of one job after its time limit, at most
    train_limit: str | None = None  # --time-limit: training time in each job; None: time less the margin
    poll: float = 10.0  # seconds between looks at the queue while waiting

    def job_seconds(self) -> float:
        return parse_slurm_time(self.time)

    def train_seconds(self) -> float:
        """The training time of each job: ``--time-limit``, else the job's time less
        ``margin`` (start-up, the last round's save, SLURM's kill)."""
        from ..timelimit import parse_duration

        if self.train_limit is not None:
            return parse_duration(self.train_limit)
        return self.job_seconds() - margin(self.job_seconds())


def margin(job_seconds: float) -> float:
    """Left unused at a job's end: 5 % of it, at least a minute, at most 15 minutes."""
    return min(max(60.0, 0.05 * job_seconds), 900.0)


def parse_slurm_time(text: str) -> float:
    """Seconds in a job time as sbatch writes it (``MM``, ``MM:SS``, ``HH:MM:SS``, ``D-HH``,
    ``D-HH:MM``, ``D-HH:MM:SS``; a plain number is minutes) or as collapse-lab writes
    durations (``4h``, ``90m``, ``1d2h``)."""
    s = str(text).strip()
    m = re.fullmatch(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?", s)
    if m and (m.group(1) or ":" in s or s.isdigit()):
        d, a, b, c = (int(x) if x else None for x in m.groups())
        if d is not None:  # D-HH[:MM[:SS]]
            seconds = d * 86400 + a * 3600 + (b or 0) * 60 + (c or 0)
        elif c is not None:
            seconds = a * 3600 + b * 60 + c
        elif b is not None:
            seconds = a * 60 + b
        else:
            seconds = a * 60
    else:
        from ..timelimit import parse_duration

        try:
            seconds = parse_duration(s, "--slurm-time")
        except CollapseLabError:
            raise CollapseLabError(f"--slurm-time {text!r}: write a job time as sbatch does (90, 1:30:00, 2-00:00:00) "
                                   "or as a duration (4h, 90m)") from None
    if seconds < 60:
        raise CollapseLabError(f"--slurm-time {text!r}: SLURM counts job time in minutes; give at least 1 minute")
    return float(seconds)


def check_options(o: SlurmOptions) -> None:
    """What can be checked without SLURM: one line naming the option."""
    if o.gpus < 0:
        raise CollapseLabError(f"--slurm-gpus must be >= 0 (got {o.gpus})")
    if o.cpus < 1:
        raise CollapseLabError(f"--slurm-cpus must be >= 1 (got {o.cpus})")
    if o.mem is not None and not re.fullmatch(r"\d+[KMGT]?", o.mem):
        raise CollapseLabError(f"--slurm-mem {o.mem!r}: write memory as sbatch does (16G, 64000M, 512000)")
    if o.max_requeues < 0:
        raise CollapseLabError(f"--max-requeues must be >= 0 (got {o.max_requeues})")
    if not o.poll > 0:
        raise CollapseLabError(f"--poll must be > 0 seconds (got {o.poll})")
    job = o.job_seconds()
    if o.train_limit is not None and o.train_seconds() > job - 30:
        raise CollapseLabError(f"--time-limit {o.train_limit} leaves less than 30 s of the job's --slurm-time {o.time} "
                               "to start and save; give a shorter --time-limit (or leave it out: the job's time less "
                               f"{margin(job):.0f} s)")
    if o.train_seconds() <= 0:
        raise CollapseLabError(f"--slurm-time {o.time} leaves no time to train after the margin of {margin(job):.0f} s; "
                               "give a longer --slurm-time")


def sbatch_options(o: SlurmOptions) -> dict:
    """The job's sbatch options, option -> value (True: a bare flag such as ``--exclusive``):
    one mapping for ``sbatch --test-only`` (``sbatch_flags``) and the script submitit writes."""
    out = {"time": math.ceil(o.job_seconds() / 60), "cpus-per-task": o.cpus}
    for key, v in (("partition", o.partition), ("account", o.account), ("qos", o.qos), ("mem", o.mem),
                   ("gpus-per-node", o.gpus or None)):
        if v is not None:
            out[key] = v
    return {**out, **{k: True if v == "" else v for k, v in o.extra}}


def sbatch_flags(o: SlurmOptions) -> list[str]:
    """``sbatch_options`` as command-line flags."""
    return [f"--{k}" if v is True else f"--{k}={v}" for k, v in sbatch_options(o).items()]
