"""The training options of a sweep and of the catalogue's commands (figures, tables, ladder),
checked before any work: one ``CollapseLabError`` line each, naming the flag, for options
that contradict each other or the backend. Options that would be ignored are refused, never
dropped silently. (Whether SLURM's own options were given is the command line's to say:
``check_backend``.)"""
from __future__ import annotations

from ..errors import CollapseLabError


def check_common(workers: int | None, stack: int) -> None:
    if workers is not None and workers < 1:
        raise CollapseLabError(f"--workers must be >= 1 (got {workers})")
    if stack < 1:
        raise CollapseLabError(f"--stack must be >= 1 (got {stack}); 1 trains every run on its own")


def check_sweep(backend: str, workers: int | None, address, cpus_per_run: int, gpus_per_run: float, stack: int,
                dry_run: bool, max_runs: int, wait: bool, status: bool, time_limit) -> None:
    """``sweep``'s options."""
    if workers is not None and workers < 1:
        raise CollapseLabError(f"--workers must be >= 1 (got {workers})")
    if backend == "local" and (address or cpus_per_run != 1 or gpus_per_run):
        raise CollapseLabError("--address, --cpus-per-run and --gpus-per-run have no effect with --backend local; drop them")
    if backend == "ray" and workers is not None:
        raise CollapseLabError("--workers has no effect with --backend ray (Ray places tasks by --cpus-per-run); drop it")
    if max_runs < 1:
        raise CollapseLabError(f"--max-runs must be >= 1 (got {max_runs})")
    check_dry_run(dry_run, time_limit)
    if stack < 1:
        raise CollapseLabError(f"--stack must be >= 1 (got {stack}); 1 trains every run on its own")
    if cpus_per_run < 1 or gpus_per_run < 0:
        raise CollapseLabError("--cpus-per-run must be >= 1 and --gpus-per-run >= 0")
    if backend == "slurm" and (workers is not None or address or cpus_per_run != 1 or gpus_per_run):
        raise CollapseLabError("--workers, --address, --cpus-per-run and --gpus-per-run have no effect with --backend "
                               "slurm; give --slurm-cpus and --slurm-gpus")
    if wait and backend != "slurm":
        raise CollapseLabError("--wait has no effect with --backend local or ray (they always wait); drop it")
    if status and (dry_run or wait or time_limit):
        raise CollapseLabError("--status only reports; drop --dry-run, --wait and --time-limit")


def check_catalogue(workers: int | None, stack: int, backend: str = "local", address=None, list_: bool = False,
                    no_train: bool = False, slurm_given: dict | None = None, **with_list) -> None:
    """The training options of ``figures``/``tables``, checked as ``sweep`` checks them.
    ``with_list``: the command's other flags (name -> given) that ``--list`` ignores;
    ``slurm_given``: the SLURM flags given ({flag: value}), refused with another backend."""
    check_common(workers, stack)
    if backend == "ray" and workers is not None:
        raise CollapseLabError("--workers has no effect with --backend ray (Ray places the tasks); drop it")
    if backend != "ray" and address:
        raise CollapseLabError(f"--address has no effect with --backend {backend}; drop it or add --backend ray")
    if backend == "slurm" and workers is not None:
        raise CollapseLabError("--workers has no effect with --backend slurm (one job per run); drop it")
    check_backend(backend, slurm_given or {})
    if list_:
        given = [name for name, v in (("--no-train", no_train), *with_list.items()) if v]
        if given:
            raise CollapseLabError(f"{given[0]} has no effect with --list (it only lists); drop it")
    if no_train and (workers is not None or address or backend != "local" or with_list.get("--time-limit")):
        raise CollapseLabError("--workers, --backend, --address and --time-limit have no effect with --no-train "
                               "(nothing trains); drop them")
    check_dry_run(with_list.get("--dry-run"), with_list.get("--time-limit"))


def check_backend(backend: str, given: dict) -> None:
    """SLURM options given with another backend: one line, not ignored silently."""
    if backend != "slurm" and given:
        flag = sorted(given)[0]
        raise CollapseLabError(f"{flag} has no effect with --backend {backend}; drop it or add --backend slurm")


def check_dry_run(dry_run: bool, time_limit) -> None:
    """``--dry-run`` trains nothing: a time limit beside it would be ignored."""
    if dry_run and time_limit:
        raise CollapseLabError("--time-limit has no effect with --dry-run (nothing trains); drop it")


def check_pilot(pilot_s: float | None, dry_run: bool) -> None:
    """``--pilot``: only with ``--dry-run``, 1 to 600 seconds."""
    if pilot_s is not None and (not dry_run or not 0 < pilot_s <= 600):
        raise CollapseLabError("--pilot measures this machine for --dry-run's estimate: give it with --dry-run"
                               if not dry_run else f"--pilot {pilot_s:g}: give 1 to 600 seconds")
