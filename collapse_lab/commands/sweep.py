"""``collapse-lab sweep SPEC``: a grid of runs through the train resolver, on a local pool of
worker processes, on Ray or on SLURM (``sweep``); complete runs are skipped, unfinished ones
continued. Options, checks and printing only."""
from __future__ import annotations

import json
import sys

import click

from ..signals import SweepInterrupted
from ..timelimit import continue_command
from .options import address_option, backend_option, json_option, pilot_option, stack_option, store_option, workers_option
from .common import data_root_option, time_limit_option
from .stopped import training_stopped
from .slurm_options import slurm_options


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
    from ..actions import sweep as action
    from ..runspec.backend import check_pilot, check_sweep

    check_sweep(backend, workers, address, cpus_per_run, gpus_per_run, stack, dry_run, max_runs, wait, status_,
                time_limit)  # every flag's conflicts, before the spec is read
    check_pilot(pilot_s, dry_run)
    if status_ or dry_run:
        return _report(spec, store, backend, workers, cpus_per_run, stack, max_runs, data_root, slurm_flags, pilot_s,
                       as_json, status_)
    try:
        done = action.sweep(spec, store=store, backend=backend, workers=workers, address=address,
                            cpus_per_run=cpus_per_run, gpus_per_run=gpus_per_run, stack=stack, max_runs=max_runs,
                            wait=wait, time_limit=time_limit, data_root=data_root, slurm=slurm_flags, say=say)
    except SweepInterrupted as e:
        training_stopped("sweep", e.signame)
    if done.submitted is not None:
        if as_json:
            click.echo(json.dumps(done.submitted, indent=1))
        return
    if as_json:
        click.echo(json.dumps({"results": done.results, "seconds": done.seconds}, indent=1))
    from ..sweep.outcome import outcome

    lines, status = outcome(done.results, done.total, done.todo, done.seconds, continue_command())
    click.echo("\n".join(lines), err=True)
    if status:
        sys.exit(status)


def _report(spec, store, backend, workers, cpus_per_run, stack, max_runs, data_root, slurm_flags, pilot_s,
            as_json: bool, status_: bool) -> None:
    """--status (each run's state) or --dry-run (the plan, the disk and the time)."""
    from ..actions import sweep as action

    if status_:
        from ..sweep.status import status_lines

        table = action.sweep_status(spec, store=store, max_runs=max_runs, data_root=data_root, say=say)
        click.echo(json.dumps({"runs": table}, indent=1) if as_json else "\n".join(status_lines(table)))
        return
    from ..plan.sweep_preview import preview_lines

    got = action.sweep_preview(spec, store=store, backend=backend, workers=workers, cpus_per_run=cpus_per_run,
                               stack=stack, max_runs=max_runs, data_root=data_root, slurm=slurm_flags,
                               pilot_s=pilot_s, say=say)
    click.echo(json.dumps(got, indent=1) if as_json else "\n".join(preview_lines(got)))

