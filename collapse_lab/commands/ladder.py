"""``collapse-lab ladder ENTRY... --rungs FILE``: the papers' claims on a ladder of scales
(docs/scale.md), a shell over ``collapse_lab.catalogue.climb``: the options checked, the
rungs climbed, ``--dry-run`` printed, Ctrl-C said, the outputs written (``ladder_report``).
"""
from __future__ import annotations

import json
from pathlib import Path

import click

from .options import check_pilot, json_option, pilot_option, preset_option, stack_option, store_option, workers_option
from ..catalogue.climb import cells, climb, dry_rows, match_data, other_records
from ..errors import CollapseLabError
from .common import checked_data_root, data_root_option
from .options import chosen_precision, precision_option


def dry(cells_: list[dict], store: Path, out_dir: Path, as_json: bool, pilot_s: float | None = None,
        workers: int | None = None) -> None:
    """``--dry-run``: each rung's runs, those to train and their estimated time (with
    ``--pilot``, also on this machine now, as a range)."""
    from ..catalogue.ladder_checks import dry_lines

    here = None
    if pilot_s is not None:
        from ..plan.pilot import pilot

        here = pilot([r for c in cells_ if "na" not in c for r in c["configs"]], pilot_s, workers)
    out = dry_rows(cells_, store, out_dir, here)
    click.echo(json.dumps(out, indent=1) if as_json else "\n".join(dry_lines(out)))


HELP = """Check the papers' claims of the figure entries NAMES on a ladder of scales.


A rung is one set of train options laid over --preset (more rounds, more images, another
model, more seeds: --rungs names the YAML file that lists them; `rungs` is the study's of
docs/scale.md). Per rung and entry the ladder trains the runs (or reads them), renders the
figure, measures the regime (do clients fit their own data, has the global model stopped
improving, are units alive) and checks each claim over seeds: holds, refuted, not resolved
at this scale, or uninformative, with "at an unmatched regime" where the rung falls short.

Where it goes: --out/records/<rung>--<entry>.json (kept: never trained again; each run's
evidence in records/runs/ as it finishes), and LADDER.md, ladder.csv, ladder.json and
ladder.png (rungs x claims) in --out. --dry-run lists each rung's runs and the time they
take; --no-train rewrites the outputs from the records alone."""


@click.command("ladder", help=HELP)
@click.argument("names", nargs=-1, required=True)
@click.option("--rungs", "rungs_file", default="rungs", show_default=True,
              help="YAML file of rungs, each a name and a set of train options, or a packaged ladder: rungs (the study's "
                   "of docs/scale.md), rungs-gpu (docs/scale.md).")
@preset_option("cpu", "The catalogue preset every rung starts from.")
@store_option("Run store (shared with figures; one per data sample).")
@click.option("--out", default="ladder", show_default=True, type=click.Path(file_okay=False),
              help="Folder of the ladder's records, figures and tables (keep it: a kept record is never "
                   "trained again).")
@click.option("--rung", "only", multiple=True, help="Train only this rung of --rungs (repeatable); the others are "
                                                    "written from their kept records, or said not trained yet.")
@workers_option("Training processes (default: the cores).")
@stack_option(8)
@click.option("--dry-run", "dry_run_", is_flag=True, help="Train nothing: each rung's runs, those to train and "
                                                          "their estimated time.")
@click.option("--no-train", is_flag=True, help="Write the ladder's outputs from the kept records and the runs "
                                               "present; a rung whose runs are missing says so.")
@json_option
@click.option("--other-sample", type=click.Path(file_okay=False), default=None,
              help="The --out folder of the same ladder on another sample of the data (no image in common): a "
                   "verdict that differs there is not resolved at this scale.")
@click.option("--seed-base", type=click.IntRange(min=0), default=0, show_default=True,
              help="Shift every seed by this number: a replication on another data sample then draws new partitions "
                   "and initial weights (seeds 0-5 with --seed-base 1000 are 1000-1005); kept in the records.")
@pilot_option
@data_root_option
@precision_option
def ladder_cmd(names, rungs_file, preset, store, out, only, workers, stack, dry_run_, no_train, as_json, other_sample,
               seed_base, pilot_s, precision, data_root):
    """The ladder of scales (``HELP``): check, climb, write."""
    from ..catalogue.ladder_checks import check_ladder, nothing_to_read
    from ..catalogue.ladder_report import write
    from ..catalogue.rungs import rungs_path

    entries, rungs = check_ladder(names, preset, rungs_file, only, no_train, dry_run_, workers, stack, other_sample)
    check_pilot(pilot_s, dry_run_)
    say = (lambda m: click.echo(m, err=True))
    store, out = Path(store), Path(out)
    if not dry_run_:
        from ..store.paths import check_output_folder

        check_output_folder(out, "--out")  # a read-only target is one line before any rung trains
    cells_ = cells(entries, rungs, preset, store, f"--rungs {rungs_file}", checked_data_root(data_root), chosen_precision(precision),
                   seed_base)
    if all("na" in c for c in cells_):
        raise CollapseLabError(f"--rungs {rungs_file}: no rung applies to {', '.join(names)}")
    unread = match_data(cells_, store, out, dry_run_, checked_data_root(data_root), no_train)
    if no_train and nothing_to_read(cells_, store, out):
        raise CollapseLabError(f"--no-train: no rung has its runs in --store {store} or a record in --out {out}; "
                               "drop --no-train to train them, or point --store/--out at a ladder's")
    if no_train and unread:
        say(f"ladder: the data cannot be read here, so each kept record is taken by its runs and rounds, the "
            f"images it names unchecked ({unread[0]})")
    if dry_run_:
        if unread and not as_json:
            say(f"ladder: no data to match kept records against, so every run is counted ({unread[0]})")
        return dry([c for c in cells_ if not only or c["rung"].name in only], store, out, as_json, pilot_s, workers)
    say(f"ladder: {len(rungs)} rung(s) x {len(entries)} entr{'y' if len(entries) == 1 else 'ies'} at --preset "
        f"{preset}, store {store}, records in {out / 'records'}")
    other = other_records(other_sample, cells_) if other_sample else None
    from ..sweep.backends import SweepInterrupted

    try:
        records = climb(cells_, preset, store, out, workers, stack, say, no_train, set(only) or None)
    except SweepInterrupted as e:  # Ctrl-C, SIGTERM: finished runs and kept records stay
        from ..signals import exit_status

        say(f"ladder interrupted ({e.signame}): finished runs and the rungs' records are kept; the same command "
            "continues")
        raise SystemExit(exit_status(e.signame)) from None
    if no_train and all("na" in r for r in records):
        return _nothing_to_write(records, cells_, store, out, as_json, say)
    title = f"ladder: {', '.join(names)} at --preset {preset} ({rungs_path(rungs_file).name})"
    files = write(out, records, title, other)
    say(f"ladder: {out / 'LADDER.md'}, {out / 'ladder.png'} (rungs x claims, coloured by verdict)")
    if as_json:
        click.echo(json.dumps({"records": records, "files": [str(f) for f in files]}, indent=1, default=str))


def _nothing_to_write(records, cells_, store: Path, out: Path, as_json: bool, say) -> None:
    """``--no-train`` where no rung has all its runs: the evidence it kept said, else refused."""
    if not (n := sum(c.get("kept_now", 0) for c in cells_)):
        raise CollapseLabError(f"--no-train: no rung has its runs in --store {store} or a record in --out {out}; "
                               "drop --no-train to train them, or point --store/--out at a ladder's")
    say(f"ladder: no rung has all its runs yet; the evidence of {n} run(s) in --store kept in "
        f"{out / 'records' / 'runs'} (a ladder with this --out trains only the others)")
    if as_json:
        click.echo(json.dumps({"records": records, "files": []}, indent=1, default=str))
