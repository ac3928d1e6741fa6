"""``collapse-lab figures``: every figure of the papers from one command. Trains the runs
that are missing (through the sweep engine), renders each entry of the catalogue
(``analyses/specs/``) to ``<out>/<name>.pdf/.png`` with its plotted numbers in
``<name>.json``, and checks each figure's claim (``--check``; ``<out>/CLAIMS-<preset>.md``)."""
from __future__ import annotations

import json

import click

from .catalogue_cmd import run_action
from .catalogue_options import catalogue_options


@click.command("figures")
@catalogue_options("figures", "Figure folder.", "List the catalogue's figures: runs present/missing, last rendered.")
@click.option("--check", is_flag=True, help="Print each claim with its numbers (always written to "
                                            "<out>/CLAIMS-<preset>.md and claims-<preset>.json, merged by entry).")
def figures_cmd(names, preset, store, out, list_, no_train, backend, workers, stack, address, as_json, dry_run_,
                smoke, keep, pilot_s, time_limit, precision, data_root, settings, check,
                slurm_flags):
    """Render NAMEs (default: every figure of the catalogue) at --preset."""
    o = dict(list_=list_, no_train=no_train, backend=backend, workers=workers, stack=stack, address=address,
             as_json=as_json, dry_run_=dry_run_, smoke=smoke, keep=keep, time_limit=time_limit,
             pilot_s=pilot_s, precision=precision, data_root=data_root, overrides=settings,
             slurm_flags=slurm_flags)
    records = run_action("figures", names, preset, store, out, o, {"--check": check})
    if records is None:  # --dry-run, --list
        return
    if check and not as_json:
        print_claims(records)
    if as_json:
        click.echo(json.dumps({"preset": preset, "smoke": smoke, "train_seconds": round(records.train_seconds, 1),
                               "seconds": round(records.seconds, 1), "failed_runs": records.failed_runs,
                               "entries": list(records)}, indent=1))
    errors = [r for r in records if "error" in r]
    claims = records.out / ("CLAIMS-" + preset + ("-smoke" if smoke else "") + ".md")
    click.echo(f"figures: {len(records) - len(errors)} of {len(records)} rendered in {records.seconds:.1f} s "
               f"(training {records.train_seconds:.1f} s); claims in {claims}", err=True)
    if errors or records.failed_runs:
        raise SystemExit(1)


def print_claims(records: list[dict]) -> None:
    """--check: each claim with its numbers and verdict, one line each."""
    from ..judging.seeds import verdict_text

    for rec in records:
        for c in rec.get("claims", []):
            over = f" | over seeds: {c['over_seeds']}" if c.get("over_seeds") else ""
            click.echo(f"{rec['entry']:<18} | {c['text']} | {c['measured']}{over} | "
                       f"{verdict_text(c).replace('**does not hold**', 'DOES NOT HOLD')}")
