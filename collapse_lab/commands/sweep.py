"""``collapse-lab sweep SPEC``: a grid of runs through the train resolver, on a local pool of
worker processes or on Ray; complete runs are skipped, unfinished ones continued."""
from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path

import click

from ..errors import CollapseLabError
from ..timelimit import EXIT_TIME_LIMIT
from ..store.naming import in_stored_precisions
from .common import check_time_limit, data_root_option, given_data_root, precision_line, time_limit_option
from .slurm_options import check_backend, check_round, given_slurm, slurm_options


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


@click.command("sweep", short_help="Train a grid of runs on a local pool, a Ray cluster or SLURM.")
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("--store", "store", default="checkpoints", show_default=True, type=click.Path(file_okay=False),
              help="Run store (on Ray: a filesystem every node sees).")
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
    from ..training.prepare import estimate_bytes, total_steps
    from ..sweep import backends, service
    from ..sweep.spec import expand, load_spec, precision_open

    store = Path(store)
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
    loaded = load_spec(spec)
    configs = expand(loaded, f"sweep spec {spec}", warn=lambda m: click.echo(f"sweep: note: {m}", err=True),
                     max_runs=max_runs, distinct=True, data_root=given_data_root())
    slurm = given_slurm(loaded.get("slurm"), time_limit, f"sweep spec {spec}") if backend == "slurm" else None
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

        configs_free, busy = split_busy(Path(store), configs)
    planned = service.plan(configs_free if backend == "slurm" else configs, store)
    prepared, gone, pending = planned.prepared, planned.gone, planned.pending
    todo = [p.config for p in pending]
    work, alone = service.work_units(planned, stack)
    if alone:
        click.echo(f"sweep: note: {len(alone)} run(s) train on their own, not stacked: "
                   f"{alone[0][1]} ({alone[0][0].run_name()}" + (", ..." if len(alone) > 1 else "") + ")", err=True)
    rate = seconds_per_step(store, configs[0].dataset, configs[0].model) if configs else None
    steps = sum(total_steps(p) for p in pending)
    disk = sum(estimate_bytes(p) for p in pending)
    n = workers or backends.cores()
    eta = rate * steps / (n if backend == "local" else max(1, backends.cores() // cpus_per_run)) if rate else None
    if dry_run:
        status = {p.config.run_name(): status_of(p) for p in prepared} | {c.run_name(): "diverged" for c in gone}
        rows = [{"run": c.run_name(), "status": status[c.run_name()], "rounds": c.rounds} for c in configs]
        from ..bench.estimate import estimate, lines

        plan = estimate(todo)  # the runs still to train, per device class (the project's measurements)
        if as_json:
            click.echo(json.dumps({"runs": rows, "to_train": len(todo), "estimate_bytes": disk,
                                   "estimate_seconds": eta, "plan": plan}, indent=1))
            return
        for r in rows:
            click.echo(f"{r['run']:<64} {r['status']}")
        click.echo(f"{len(configs)} run(s): {len(configs) - len(todo)} complete or diverged, {len(todo)} to train; "
                   f"about {disk / 1e6:.1f} MB of checkpoints, about {_fmt(eta)} "
                   + ("(from this store's finished runs)" if rate else "(no finished run of this model to time)"))
        for line in lines(plan, "to train"):
            click.echo(line)
        return
    if backend == "slurm":
        from ..sweep.slurm import check_cluster

        check_round(slurm, todo)
        check_cluster(slurm)
        service.check(planned, store, work, n)
    else:
        check_time_limit(time_limit, todo)
        service.check(planned, store, work, n)
    # the first line after the checks (a refusal stays one line): the precision of the runs
    click.echo(f"sweep: {len(configs)} run(s), precision {precision_line(configs, auto=auto)}", err=True)
    for c in gone:
        click.echo(f"sweep: {c.run_name()} diverged earlier; not retrained (train --overwrite retrains it)", err=True)
    work = work + [[c] for c in busy]  # submit names each one's job and submits nothing for it; --wait watches it
    todo = todo + busy
    t0, state = time.time(), {"done": 0, "running": 0, "failed": 0, "walls": []}
    total = len(todo)

    def report(ev: dict) -> None:
        if ev["event"] == "start":
            state["running"] += 1
            return
        state["running"] -= not ev.get("not_started")
        state["done"] += 1
        ok = ev["status"] in ("complete", "skipped", "time-limit", "interrupted")
        state["failed"] += not ok
        if ev["status"] == "complete":
            state["walls"].append(ev["wall_seconds"])
        left = total - state["done"] - state["running"]
        mean = sum(state["walls"]) / len(state["walls"]) if state["walls"] else None
        eta_now = mean * (left + state["running"]) / (n if backend == "local" else 1) if mean else None
        what = f"test acc {ev['final_test_acc']:.4f}" if "final_test_acc" in ev else ev["status"]
        click.echo(f"sweep: {ev['run']} {what} ({ev['wall_seconds']:.1f} s); {state['done']} done, {state['running']} "
                   f"running, {state['failed']} failed, {left} remaining; ETA {_fmt(eta_now)}", err=True)

    resume_cmd = " ".join(shlex.quote(a) for a in ["collapse-lab", *sys.argv[1:]])
    say = (lambda m: click.echo(f"sweep: {m}", err=True))
    if backend == "slurm" and not wait:
        from ..sweep.slurm import submit

        jobs = submit(work, store, slurm, say) if work else []
        watch = " ".join(shlex.quote(a) for a in ["collapse-lab", "sweep", spec, "--store", str(store), "--status"])
        if as_json:
            click.echo(json.dumps({"submitted": [{"job_id": j, "runs": [c.run_name() for c in u]} for u, j in jobs],
                                   "watch": watch}, indent=1))
        click.echo(f"sweep: {len(todo)} run(s) to train, {len(configs) - len(todo)} already complete; SLURM job(s): "
                   f"{', '.join(sorted({j for _, j in jobs})) or 'none'}; watch with: {watch} (or squeue --me); "
                   "the runs land in the store as the jobs finish", err=True)
        return
    try:
        results = service.execute(work, store, backend, n, report, time_limit, address, cpus_per_run, gpus_per_run,
                                  slurm=slurm, say=say)
    except backends.Interrupted as e:
        from ..signals import exit_status

        click.echo(f"sweep interrupted ({e.signame}): finished runs are kept, the ones under way stopped after their "
                   f"current client; continue with: {resume_cmd}", err=True)
        sys.exit(exit_status(e.signame))
    late = [r for r in results if r["status"] == "time-limit"]
    stopped = [r for r in results if r["status"] == "interrupted"]  # a signal to a worker: every round kept
    failed = [r for r in results if r["status"] not in ("complete", "skipped", "time-limit", "interrupted")]
    if as_json:
        click.echo(json.dumps({"results": results, "seconds": round(time.time() - t0, 2)}, indent=1))
    click.echo(f"sweep: {len(results) - len(failed) - len(late) - len(stopped)} of {len(configs)} run(s) trained now, "
               f"{len(configs) - len(todo)} already complete, {len(failed)} failed"
               + (f", {len(stopped)} interrupted" if stopped else "")
               + (f", {len(late)} stopped by --time-limit" if late else "") + f", in {time.time() - t0:.1f} s", err=True)
    for r in stopped:
        click.echo(f"  interrupted: {r['run']}: {r.get('error', r['status'])}", err=True)
    for r in failed:
        click.echo(f"  failed: {r['run']}: {r.get('error', r['status'])}", err=True)
    if stopped and not failed and not late:
        click.echo(f"  every complete round is kept; continue the sweep with: {resume_cmd}", err=True)
        sys.exit(1)
    if late:
        click.echo(f"sweep: time limit: {len(late)} run(s) stopped after their last round that fit or not started; "
                   f"every complete round is kept; continue with: {resume_cmd}", err=True)
        sys.exit(EXIT_TIME_LIMIT)
    if failed:
        click.echo(f"  continue the sweep with: {resume_cmd}", err=True)
        sys.exit(1)
