"""The SLURM options as the command line names them (``--slurm-time``, ...): each flag's
``sweep.slurm_options.SlurmOptions`` field, its key in a sweep spec's ``slurm:`` mapping, its type
and help, and ``--slurm-option KEY=VALUE`` parsed; read by the commands that declare them
and by ``sweep.slurm_flags``, which builds the options."""
from __future__ import annotations

from ..errors import CollapseLabError

# flag -> (SlurmOptions field, the spec's key, type)
FLAGS = {
    "--slurm-partition": ("partition", "partition", str),
    "--slurm-account": ("account", "account", str),
    "--slurm-qos": ("qos", "qos", str),
    "--slurm-gpus": ("gpus", "gpus", int),
    "--slurm-cpus": ("cpus", "cpus", int),
    "--slurm-mem": ("mem", "mem", str),
    "--slurm-time": ("time", "time", str),
    "--max-requeues": ("max_requeues", "max_requeues", int),
    "--poll": ("poll", "poll", float),
}
HELP = {
    "--slurm-partition": "slurm: the partition (default: the cluster's default).",
    "--slurm-account": "slurm: the account to charge.",
    "--slurm-qos": "slurm: the quality of service.",
    "--slurm-gpus": "slurm: GPUs per job (default 0; with GPUs the run's device auto is cuda).",
    "--slurm-cpus": "slurm: CPUs per job; the job trains with this many threads (default 2).",
    "--slurm-mem": "slurm: memory per job as sbatch writes it, e.g. 16G (default: the cluster's).",
    "--slurm-time": "slurm: each job's time limit, 90 / 4:00:00 / 1-00:00:00 (sbatch) or 4h (default 4h). Jobs train "
                    "for this time less a margin (5 %, 1 to 15 min), or --time-limit, then requeue themselves.",
    "--max-requeues": "slurm: requeues of one job after its time limit, at most (default 5); then the run is named "
                      "in the summary and the same command continues it.",
    "--poll": "slurm: seconds between looks at the queue while waiting (default 10).",
}


def parse_extra(items, where: str = "--slurm-option") -> tuple:
    out = []
    for item in items:
        key, eq, value = str(item).partition("=")
        key = key.strip().lstrip("-")
        if not eq or not key:
            raise CollapseLabError(f"{where} {item!r}: write KEY=VALUE (an sbatch option without its dashes, e.g. "
                                   "constraint=a100; exclusive= for a flag)")
        flags = {"time": "--slurm-time", "partition": "--slurm-partition", "account": "--slurm-account",
                 "qos": "--slurm-qos", "mem": "--slurm-mem", "cpus-per-task": "--slurm-cpus",
                 "gpus-per-node": "--slurm-gpus"}
        if key in flags or key in {"array", "output", "error", "job-name", "signal", "requeue", "no-requeue"}:
            raise CollapseLabError(f"{where} {key}: collapse-lab sets {key} itself"
                                   + (f"; give it as {flags[key]}" if key in flags else ""))
        out.append((key, value))
    return tuple(out)
