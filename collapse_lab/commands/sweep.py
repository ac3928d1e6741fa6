"""``collapse-lab sweep SPEC``: a grid of runs through the train resolver, on a local pool of
worker processes, on Ray or on SLURM (``sweep``); complete runs are skipped, unfinished ones
continued. Options, checks and printing only."""
from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path

import click

from .options import address_option, backend_option, check_pilot, json_option, pilot_option, stack_option, store_option, workers_option
from ..runspec.expand import precision_line
from .common import checked_data_root, data_root_option, time_limit_option
from .slurm_options import check_backend, given_slurm, slurm_options


def say(m: str) -> None:
    click.echo(f"sweep: {m}", err=True)


@click.command("sweep")
@click.argument("spec", type=click.Path(dir_okay=False))
@store_option("Run store (on Ray: a filesystem every node sees).")
@backend_option("local: a pool of processes here; ray: tasks on a Ray cluster; slurm: one SLURM job per run "
                "(docs/sweeps.md), returning once submitted unless --wait.")
@workers_option("local: runs at once (default: the number of cores); each gets its share of the cores.")
@address_option("ray: auto or HOST:PORT of a running cluster (default: start a local one).")
@click.option("--cpus-per-run", type=int, default=1, show_default=True, help="ray: num_cpus of each task.")
@click.option("--gpus-per-run", type=float, default=0.0, show_default=True, help="ray: num_gpus of each task.")
@stack_option(1, "Train up to N runs of one architecture and local step together as one stacked model (much faster "
                "for small models; each run equals training it alone to fp32 round-off, not bit for bit). 1: off.")
@click.option("--dry-run", is_flag=True, help="List every run with its status, and the disk and time estimate.")
@pilot_option
@click.option("--max-runs", type=int, default=10_000, show_default=True,
              help="Refuse a grid with more points than this (counted before it is expanded).")
@json_option
@click.option("--wait", is_flag=True, help="slurm: wait for the jobs and print each outcome (default: return once "
                                           "submitted, printing how to watch them).")
@click.option("--status", "status_", is_flag=True, help="Each run of SPEC: its state in the store and, for a sweep "
                                                        "submitted to SLURM, its job id, SLURM state and requeues.")
@time_limit_option
@data_root_option
@slurm_options
def sweep_cmd(spec, store, backend, workers, address, cpus_per_run, gpus_per_run, stack, dry_run, pilot_s, max_runs,
              as_json, wait, status_, time_limit, data_root, slurm_flags):
    """Expand SPEC (base options x grid axes x seeds, YAML/TOML/JSON) through the same
    resolver as train, skip complete runs, continue unfinished ones, train the rest.

    Exit status 1 when a run failed or diverged, 2 for a bad spec, 130 on Ctrl-C (finished
    runs are kept; running the same command again continues the sweep), 75 when
    --time-limit stopped it (the same command continues)."""
    from ..plan.sweep_preview import check_before_training, preview, preview_lines
    from ..sweep.backends import cores
    from ..runspec.backend import check_sweep
    from ..sweep.outcome import outcome
    from ..sweep.prepare import units

    store = Path(store)
    check_sweep(backend, workers, address, cpus_per_run, gpus_per_run, stack, dry_run, max_runs, wait, status_,
                time_limit)
    check_backend(backend, slurm_flags)
    check_pilot(pilot_s, dry_run)
    configs, slurm, auto = _configs(spec, store, backend, max_runs, time_limit, data_root, slurm_flags)
    if status_:
        return print_status(configs, store, as_json)
    planned, work, alone, busy = units(configs, store, backend, stack)  # checked before anything runs
    if alone:
        click.echo(f"sweep: note: {len(alone)} run(s) train on their own, not stacked: "
                   f"{alone[0][1]} ({alone[0][0].run_name()}" + (", ..." if len(alone) > 1 else "") + ")", err=True)
    n = workers or cores()
    if dry_run:
        got = preview(planned, configs + busy, store, n if backend == "local" else max(1, cores() // cpus_per_run),
                      pilot_s, workers)
        click.echo(json.dumps(got, indent=1) if as_json else "\n".join(preview_lines(got)))
        return
    check_before_training(planned, store, work, n, backend, slurm, time_limit)
    # the first line after the checks (a refusal stays one line): the precision of the runs
    say(f"{len(configs) + len(busy)} run(s), precision {precision_line(configs + busy, auto=auto)}")
    for c in planned.gone:
        say(f"{c.run_name()} diverged earlier; not retrained (train --overwrite retrains it)")
    work = work + [[c] for c in busy]  # submit names each one's job and submits nothing for it; --wait watches it
    todo = [p.config for p in planned.pending] + busy
    if backend == "slurm" and not wait:
        return submit_report(work, todo, len(configs) + len(busy), spec, store, slurm, as_json)
    results, seconds = run_sweep(work, todo, store, backend, n, time_limit, address, cpus_per_run, gpus_per_run, slurm)
    if as_json:
        click.echo(json.dumps({"results": results, "seconds": seconds}, indent=1))
    lines, status = outcome(results, len(configs) + len(busy), len(todo), seconds, resume_command())
    click.echo("\n".join(lines), err=True)
    if status:
        sys.exit(status)


def _configs(spec: str, store: Path, backend: str, max_runs: int, time_limit, data_root: str | None = None,
             slurm_flags: dict | None = None):
    """SPEC's runs, its SLURM settings (checked on any backend: a typo is found now, not on
    the cluster), and whether the precision was left open (``sweep.prepare.spec_runs``)."""
    from ..sweep.prepare import spec_runs

    configs, loaded, auto = spec_runs(spec, store, max_runs, checked_data_root(data_root),
                                      lambda m: click.echo(f"sweep: note: {m}", err=True), say)
    slurm = given_slurm(slurm_flags or {}, loaded.get("slurm"), time_limit if backend == "slurm" else None, f"sweep spec {spec}") \
        if backend == "slurm" or loaded.get("slurm") is not None else None
    return configs, (slurm if backend == "slurm" else None), auto


def submit_report(work, todo, total: int, spec: str, store: Path, slurm, as_json: bool) -> None:
    """--backend slurm without --wait: submit the jobs and say how to watch them."""
    from ..sweep.prepare import submitted
    from ..sweep.slurm import submit

    jobs = submit(work, store, slurm, say) if work else []
    got, line = submitted(jobs, todo, total, " ".join(
        shlex.quote(a) for a in ["collapse-lab", "sweep", spec, "--store", str(store), "--status"]))
    if as_json:
        click.echo(json.dumps(got, indent=1))
    click.echo(f"sweep: {line}", err=True)


def resume_command() -> str:
    return " ".join(shlex.quote(a) for a in ["collapse-lab", *sys.argv[1:]])


def run_sweep(work, todo, store: Path, backend: str, n: int, time_limit, address, cpus_per_run, gpus_per_run,
              slurm) -> tuple[list[dict], float]:
    """Train the units; Ctrl-C or SIGTERM exits with its status, saying how to continue."""
    from ..sweep import backends, service
    from ..sweep.outcome import Progress

    t0 = time.time()
    try:
        results = service.execute(work, store, backend, n, Progress(len(todo), n if backend == "local" else 1, say),
                                  time_limit, address, cpus_per_run, gpus_per_run, slurm=slurm, say=say)
    except backends.SweepInterrupted as e:
        from ..signals import exit_status

        click.echo(f"sweep interrupted ({e.signame}): finished runs are kept, the ones under way stopped after their "
                   f"current client; continue with: {resume_command()}", err=True)
        sys.exit(exit_status(e.signame))
    return results, round(time.time() - t0, 2)


def print_status(configs, store, as_json: bool) -> None:
    """``--status``: a line per run (its store state, its SLURM job) and the counts."""
    from ..sweep.status import status_lines, status_rows

    table = status_rows(configs, Path(store))
    click.echo(json.dumps({"runs": table}, indent=1) if as_json else "\n".join(status_lines(table)))
