"""``collapse-lab tables``: every table of the papers beside the printed numbers. Trains the
runs that are missing (through the sweep engine), then writes ``<out>/<name>.md``, ``.csv``,
``.tex`` and ``.json`` (every cell with the runs it averages and their values)."""
from __future__ import annotations

import json

import click

from .catalogue_cmd import run_action
from .catalogue_options import catalogue_options


@click.command("tables")
@catalogue_options("tables", "Output folder.", "List the catalogue's tables with their runs present/missing.")
@click.option("--compare-paper", is_flag=True, help="Put the paper's printed value and the difference beside each cell.")
def tables_cmd(names, preset, store, out, list_, no_train, backend, workers, stack, address, as_json, dry_run_, smoke,
               keep, pilot_s, time_limit, precision, data_root, settings, compare_paper,
               slurm_flags):
    """Render NAMEs (default: every table of the catalogue) at --preset."""
    o = dict(list_=list_, no_train=no_train, backend=backend, workers=workers, stack=stack, address=address,
             as_json=as_json, dry_run_=dry_run_, smoke=smoke, keep=keep, time_limit=time_limit,
             pilot_s=pilot_s, precision=precision, data_root=data_root, overrides=settings,
             slurm_flags=slurm_flags)
    records = run_action("tables", names, preset, store, out, o, {"--compare-paper": compare_paper},
                         compare_paper=compare_paper)
    if records is None:  # --dry-run, --list
        return
    if len(records) == 1 and records.markdown[0] is not None and not as_json:
        click.echo(records.markdown[0])
    if as_json:
        click.echo(json.dumps({"preset": preset, "smoke": smoke, "train_seconds": round(records.train_seconds, 1),
                               "seconds": round(records.seconds, 1), "failed_runs": records.failed_runs,
                               "tables": list(records)}, indent=1))
    errors = [r for r in records if "error" in r]
    click.echo(f"tables: {len(records) - len(errors)} of {len(records)} handled in {records.seconds:.1f} s "
               f"(training {records.train_seconds:.1f} s)", err=True)
    if errors or records.failed_runs:
        raise SystemExit(1)
