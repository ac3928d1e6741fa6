"""The SLURM options of ``sweep``, ``figures`` and ``tables`` (``--backend slurm``) as the
command line names them ({flag: value}), or a ``slurm:`` mapping in a sweep spec (a flag
wins): checked, and built into ``sweep.slurm.SlurmOptions``."""
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


def check_backend(backend: str, given: dict) -> None:
    """SLURM options given with another backend: one line, not ignored silently."""
    if backend != "slurm" and given:
        flag = sorted(given)[0]
        raise CollapseLabError(f"{flag} has no effect with --backend {backend}; drop it or add --backend slurm")


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


def given_slurm(given: dict, spec_section: dict | None = None, time_limit: str | None = None,
                where: str = "sweep spec"):
    """The SlurmOptions of this command: the spec's ``slurm:`` mapping, then the flags given."""
    from ..sweep.slurm import SlurmOptions, check_options

    values, extra, from_spec = {}, (), {}
    if spec_section is not None:
        if not isinstance(spec_section, dict):
            raise CollapseLabError(f"{where}: slurm must be a mapping of SLURM options (partition, time, ...)")
        keys = {spec for _, spec, _ in FLAGS.values()} | {"options"}
        for k, v in spec_section.items():
            if k not in keys:
                raise CollapseLabError(f"{where}: slurm.{k} is not a SLURM option; the options: {', '.join(sorted(keys))}")
            if k == "options":
                if not isinstance(v, dict):
                    raise CollapseLabError(f"{where}: slurm.options must map sbatch options to values")
                extra = parse_extra([f"{a}={'' if b is True else b}" for a, b in v.items()], f"{where}: slurm.options")
                continue
            flag, (field, _, typ) = next((f, t) for f, t in FLAGS.items() if t[1] == k)
            try:
                values[field] = typ(v)
            except (TypeError, ValueError):
                raise CollapseLabError(f"{where}: slurm.{k} {v!r} is not a {typ.__name__}") from None
            from_spec[flag] = f"{where}: slurm.{k}"
    for flag, v in given.items():
        if flag == "--slurm-option":
            extra = extra + parse_extra(v)
        else:
            values[FLAGS[flag][0]] = v
            from_spec.pop(flag, None)  # a flag wins, and is named as given
    o = SlurmOptions(**values, extra=extra, train_limit=time_limit)
    try:
        check_options(o)
    except CollapseLabError as e:  # a value the spec gave is named as the spec's key, not as a flag not given
        msg = str(e)
        for flag, key in from_spec.items():
            msg = msg.replace(flag + " ", key + " ")
        raise CollapseLabError(msg) from None
    return o
