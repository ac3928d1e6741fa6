"""``collapse-lab sweep SPEC``: a grid of runs through the train resolver, on a local pool of
worker processes or on Ray; complete runs are skipped, unfinished ones continued."""
from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path

import click

from .options import store_option
from ..errors import CollapseLabError
from ..timelimit import EXIT_TIME_LIMIT
from ..store.naming import in_stored_precisions
from ..runspec.expand import precision_line
from ..bench.estimate import check_job_time, check_time_limit
from .common import data_root_option, given_data_root, time_limit_option
from .slurm_options import check_backend, given_slurm, slurm_options


def status_of(p) -> str:
    """A prepared run's state in the store, from what ``prepare`` decided to do with it."""
    return {"skip": "complete", "train": "missing"}.get(p.action, f"partial {p.start} of {p.config.rounds}")


def seconds_per_step(store: Path, dataset: str, model: str) -> float | None:
    """From the store's finished runs of this data set and model (train_seconds / steps)."""
    from ..store import find_runs

    rates = []
    for run in find_runs(store):
        m = run.meta
        if m.get("status") == "complete" and m.get("dataset") == dataset and m.get("model") == model \
                and m.get("train_seconds"):
            steps = sum(e.get("steps", 0) for e in run.metrics() if e.get("event") == "local_epoch")
            if steps:
                rates.append(m["train_seconds"] / steps)
    return sum(rates) / len(rates) if rates else None


def _fmt(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    m, s = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s"


@click.command("sweep")
@click.argument("spec", type=click.Path(dir_okay=False))
@store_option("Run store (on Ray: a filesystem every node sees).")
@click.option("--backend", type=click.Choice(["local", "ray", "slurm"]), default="local", show_default=True,
              help="local: a pool of processes here; ray: tasks on a Ray cluster; slurm: one SLURM job per run "
                   "(docs/sweeps.md), returning once submitted unless --wait.")
@click.option("--workers", type=int, default=None, help="local: runs at once (default: the number of cores); each "
                                                         "gets its share of the cores.")
@click.option("--address", default=None, help="ray: auto or HOST:PORT of a running cluster (default: start a local one).")
@click.option("--cpus-per-run", type=int, default=1, show_default=True, help="ray: num_cpus of each task.")
@click.option("--gpus-per-run", type=float, default=0.0, show_default=True, help="ray: num_gpus of each task.")
@click.option("--stack", type=int, default=1, show_default=True,
              help="Train up to N runs of one architecture and local step together as one stacked model (much faster "
                   "for small models; each run equals training it alone to fp32 round-off, not bit for bit). 1: off.")
@click.option("--dry-run", is_flag=True, help="List every run with its status, and the disk and time estimate.")
@click.option("--max-runs", type=int, default=10_000, show_default=True,
              help="Refuse a grid with more points than this (counted before it is expanded).")
@click.option("--json", "as_json", is_flag=True, help="Print the runs and outcomes as JSON on stdout.")
@click.option("--wait", is_flag=True, help="slurm: wait for the jobs and print each outcome (default: return once "
                                           "submitted, printing how to watch them).")
@click.option("--status", "status_", is_flag=True, help="Each run of SPEC: its state in the store and, for a sweep "
                                                        "submitted to SLURM, its job id, SLURM state and requeues.")
@time_limit_option
@data_root_option
@slurm_options
def sweep_cmd(spec, store, backend, workers, address, cpus_per_run, gpus_per_run, stack, dry_run, max_runs, as_json,
              wait, status_, time_limit):
    """Expand SPEC (base options x grid axes x seeds, YAML/TOML/JSON) through the same
    resolver as train, skip complete runs, continue unfinished ones, train the rest.

    Exit status 1 when a run failed or diverged, 2 for a bad spec, 130 on Ctrl-C (finished
    runs are kept; running the same command again continues the sweep), 75 when
    --time-limit stopped it (the same command continues)."""
    from ..sweep import service
    from ..runspec.expand import expand, load_spec, precision_open

    store = Path(store)
    check_options(backend, workers, address, cpus_per_run, gpus_per_run, stack, dry_run, max_runs, wait, status_,
                  time_limit)
    loaded = load_spec(spec)
    configs = expand(loaded, f"sweep spec {spec}", warn=lambda m: click.echo(f"sweep: note: {m}", err=True),
                     max_runs=max_runs, distinct=True, data_root=given_data_root())
    slurm = given_slurm(loaded.get("slurm"), time_limit, f"sweep spec {spec}") if backend == "slurm" else None
    if backend != "slurm" and loaded.get("slurm") is not None:  # a typo is found now, not on the cluster
        given_slurm(loaded.get("slurm"), None, f"sweep spec {spec}")
    auto = precision_open(loaded)
    if auto:  # a stored run keeps the precision it was trained in
        configs = in_stored_precisions(Path(store), configs, lambda m: click.echo(f"sweep: {m}", err=True))
    if status_:
        from .sweep_status import print_status

        return print_status(configs, store, as_json)
    # names, data, conflicts: checked before anything runs; on SLURM a run a job is training
    # (queued or running) is skipped, named with its job and watched, not refused for its lock
    busy = []
    if backend == "slurm":
        from ..sweep.slurm import split_busy

        configs, busy = split_busy(Path(store), configs)
    planned = service.plan(configs, store)
    work, alone = service.work_units(planned, stack)
    if alone:
        click.echo(f"sweep: note: {len(alone)} run(s) train on their own, not stacked: "
                   f"{alone[0][1]} ({alone[0][0].run_name()}" + (", ..." if len(alone) > 1 else "") + ")", err=True)
    n = workers or _cores()
    if dry_run:
        return dry_run_report(planned, configs + busy, store, backend, n, cpus_per_run, as_json)
    check_before_training(planned, store, work, n, backend, slurm, time_limit)
    # the first line after the checks (a refusal stays one line): the precision of the runs
    click.echo(f"sweep: {len(configs) + len(busy)} run(s), precision {precision_line(configs + busy, auto=auto)}",
               err=True)
    for c in planned.gone:
        click.echo(f"sweep: {c.run_name()} diverged earlier; not retrained (train --overwrite retrains it)", err=True)
    work = work + [[c] for c in busy]  # submit names each one's job and submits nothing for it; --wait watches it
    todo = [p.config for p in planned.pending] + busy
    if backend == "slurm" and not wait:
        return submit_report(work, todo, len(configs) + len(busy), spec, store, slurm, as_json)
    results, seconds = run_sweep(work, todo, store, backend, n, time_limit, address, cpus_per_run, gpus_per_run, slurm)
    if as_json:
        click.echo(json.dumps({"results": results, "seconds": seconds}, indent=1))
    summarize(results, len(configs) + len(busy), len(todo), seconds)


def _cores() -> int:
    from ..sweep.backends import cores

    return cores()


def check_options(backend, workers, address, cpus_per_run, gpus_per_run, stack, dry_run, max_runs, wait, status_,
                  time_limit) -> None:
    """Options that contradict each other or the backend: one line each, before any work."""
    if workers is not None and workers < 1:
        raise CollapseLabError(f"--workers must be >= 1 (got {workers})")
    if backend == "local" and (address or cpus_per_run != 1 or gpus_per_run):
        raise CollapseLabError("--address, --cpus-per-run and --gpus-per-run have no effect with --backend local; drop them")
    if backend == "ray" and workers is not None:
        raise CollapseLabError("--workers has no effect with --backend ray (Ray places tasks by --cpus-per-run); drop it")
    if max_runs < 1:
        raise CollapseLabError(f"--max-runs must be >= 1 (got {max_runs})")
    if dry_run and time_limit:
        raise CollapseLabError("--time-limit has no effect with --dry-run (nothing trains); drop it")
    if stack < 1:
        raise CollapseLabError(f"--stack must be >= 1 (got {stack}); 1 trains every run on its own")
    if cpus_per_run < 1 or gpus_per_run < 0:
        raise CollapseLabError("--cpus-per-run must be >= 1 and --gpus-per-run >= 0")
    check_backend(backend)
    if backend == "slurm" and (workers is not None or address or cpus_per_run != 1 or gpus_per_run):
        raise CollapseLabError("--workers, --address, --cpus-per-run and --gpus-per-run have no effect with --backend "
                               "slurm; give --slurm-cpus and --slurm-gpus")
    if wait and backend != "slurm":
        raise CollapseLabError("--wait has no effect with --backend local or ray (they always wait); drop it")
    if status_ and (dry_run or wait or time_limit):
        raise CollapseLabError("--status only reports; drop --dry-run, --wait and --time-limit")


def eta_seconds(planned, configs, store: Path, backend: str, n: int, cpus_per_run: int) -> float | None:
    """The time the pending runs take, from this store's finished runs of the sweep's model
    (None: none to time)."""
    from ..training.prepare import total_steps

    rate = seconds_per_step(store, configs[0].dataset, configs[0].model) if configs else None
    steps = sum(total_steps(p) for p in planned.pending)
    return rate * steps / (n if backend == "local" else max(1, _cores() // cpus_per_run)) if rate else None


def dry_run_report(planned, configs, store: Path, backend: str, n: int, cpus_per_run: int, as_json: bool) -> None:
    """``--dry-run``: every run with its status, the disk and the time estimate."""
    from ..bench.estimate import estimate, lines
    from ..training.prepare import estimate_bytes

    todo = [p.config for p in planned.pending]
    disk = sum(estimate_bytes(p) for p in planned.pending)
    eta = eta_seconds(planned, configs, store, backend, n, cpus_per_run)
    status = {p.config.run_name(): status_of(p) for p in planned.prepared}
    status |= {c.run_name(): "diverged" for c in planned.gone}
    rows = [{"run": c.run_name(), "status": status.get(c.run_name(), "training (a SLURM job)"), "rounds": c.rounds}
            for c in configs]
    plan = estimate(todo)  # the runs still to train, per device class (the project's measurements)
    if as_json:
        click.echo(json.dumps({"runs": rows, "to_train": len(todo), "estimate_bytes": disk,
                               "estimate_seconds": eta, "plan": plan}, indent=1))
        return
    for r in rows:
        click.echo(f"{r['run']:<64} {r['status']}")
    click.echo(f"{len(configs)} run(s): {len(configs) - len(todo)} complete or diverged, {len(todo)} to train; "
               f"about {disk / 1e6:.1f} MB of checkpoints, about {_fmt(eta)} "
               + ("(from this store's finished runs)" if eta is not None else "(no finished run of this model to time)"))
    for line in lines(plan, "to train"):
        click.echo(line)


def check_before_training(planned, store: Path, work, n: int, backend: str, slurm, time_limit) -> None:
    from ..sweep import service

    todo = [p.config for p in planned.pending]
    if backend == "slurm":
        from ..sweep.slurm import check_cluster

        check_job_time(slurm, todo)
        check_cluster(slurm)
    else:
        check_time_limit(time_limit, todo)
    service.check(planned, store, work, n)


def submit_report(work, todo, total: int, spec: str, store: Path, slurm, as_json: bool) -> None:
    """--backend slurm without --wait: submit the jobs and say how to watch them."""
    from ..sweep.slurm import submit

    say = (lambda m: click.echo(f"sweep: {m}", err=True))
    jobs = submit(work, store, slurm, say) if work else []
    watch = " ".join(shlex.quote(a) for a in ["collapse-lab", "sweep", spec, "--store", str(store), "--status"])
    if as_json:
        click.echo(json.dumps({"submitted": [{"job_id": j, "runs": [c.run_name() for c in u]} for u, j in jobs],
                               "watch": watch}, indent=1))
    click.echo(f"sweep: {len(todo)} run(s) to train, {total - len(todo)} already complete; SLURM job(s): "
               f"{', '.join(sorted({j for _, j in jobs})) or 'none'}; watch with: {watch} (or squeue --me); "
               "the runs land in the store as the jobs finish", err=True)


class Progress:
    """One line per finished run: its outcome, the counts and the ETA from the runs' wall times."""

    def __init__(self, total: int, lanes: int):
        self.total, self.lanes = total, lanes
        self.done = self.running = self.failed = 0
        self.walls: list[float] = []

    def __call__(self, ev: dict) -> None:
        if ev["event"] == "start":
            self.running += 1
            return
        self.running -= not ev.get("not_started")
        self.done += 1
        self.failed += ev["status"] not in ("complete", "skipped", "time-limit", "interrupted")
        if ev["status"] == "complete":
            self.walls.append(ev["wall_seconds"])
        left = self.total - self.done - self.running
        mean = sum(self.walls) / len(self.walls) if self.walls else None
        eta_now = mean * (left + self.running) / self.lanes if mean else None
        what = f"test acc {ev['final_test_acc']:.4f}" if "final_test_acc" in ev else ev["status"]
        click.echo(f"sweep: {ev['run']} {what} ({ev['wall_seconds']:.1f} s); {self.done} done, {self.running} "
                   f"running, {self.failed} failed, {left} remaining; ETA {_fmt(eta_now)}", err=True)


def resume_command() -> str:
    return " ".join(shlex.quote(a) for a in ["collapse-lab", *sys.argv[1:]])


def run_sweep(work, todo, store: Path, backend: str, n: int, time_limit, address, cpus_per_run, gpus_per_run,
              slurm) -> tuple[list[dict], float]:
    """Train the units; Ctrl-C or SIGTERM exits with its status, saying how to continue."""
    from ..sweep import backends, service

    t0 = time.time()
    say = (lambda m: click.echo(f"sweep: {m}", err=True))
    try:
        results = service.execute(work, store, backend, n, Progress(len(todo), n if backend == "local" else 1),
                                  time_limit, address, cpus_per_run, gpus_per_run, slurm=slurm, say=say)
    except backends.Interrupted as e:
        from ..signals import exit_status

        click.echo(f"sweep interrupted ({e.signame}): finished runs are kept, the ones under way stopped after their "
                   f"current client; continue with: {resume_command()}", err=True)
        sys.exit(exit_status(e.signame))
    return results, round(time.time() - t0, 2)


def summarize(results: list[dict], total: int, todo: int, seconds: float) -> None:
    """The outcome line, the failures, and the exit status (1 failed or interrupted, 75 time limit)."""
    late = [r for r in results if r["status"] == "time-limit"]
    stopped = [r for r in results if r["status"] == "interrupted"]  # a signal to a worker: every round kept
    failed = [r for r in results if r["status"] not in ("complete", "skipped", "time-limit", "interrupted")]
    click.echo(f"sweep: {len(results) - len(failed) - len(late) - len(stopped)} of {total} run(s) trained now, "
               f"{total - todo} already complete, {len(failed)} failed"
               + (f", {len(stopped)} interrupted" if stopped else "")
               + (f", {len(late)} stopped by --time-limit" if late else "") + f", in {seconds:.1f} s", err=True)
    for r in stopped:
        click.echo(f"  interrupted: {r['run']}: {r.get('error', r['status'])}", err=True)
    for r in failed:
        click.echo(f"  failed: {r['run']}: {r.get('error', r['status'])}", err=True)
    if stopped and not failed and not late:
        click.echo(f"  every complete round is kept; continue the sweep with: {resume_command()}", err=True)
        sys.exit(1)
    if late:
        click.echo(f"sweep: time limit: {len(late)} run(s) stopped after their last round that fit or not started; "
                   f"every complete round is kept; continue with: {resume_command()}", err=True)
        sys.exit(EXIT_TIME_LIMIT)
    if failed:
        click.echo(f"  continue the sweep with: {resume_command()}", err=True)
        sys.exit(1)
