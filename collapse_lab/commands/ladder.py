"""``collapse-lab ladder ENTRY... --rungs FILE``: the papers' claims on a ladder of scales
(docs/scale.md), a shell over ``collapse_lab.catalogue.climb``: the options checked, the
rungs climbed, ``--dry-run`` printed, Ctrl-C said, the outputs written (``ladder_report``).
"""
from __future__ import annotations

import json

import click

from ..errors import CollapseLabError
from .common import data_root_option
from .options import json_option, pilot_option, precision_option, preset_option, stack_option
from .options import store_option, workers_option


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
    from ..actions import ladder as action
    from ..runspec.backend import check_pilot
    from ..signals import SweepInterrupted

    check_pilot(pilot_s, dry_run_)
    say = (lambda m: click.echo(m, err=True))
    o = dict(rungs=rungs_file, preset=preset, store=store, out=out, only=only, workers=workers, stack=stack,
             other_sample=other_sample, seed_base=seed_base, data_root=data_root, precision=precision, say=say)
    if dry_run_:
        from ..catalogue.ladder_checks import dry_lines

        if no_train:
            raise CollapseLabError("--dry-run has no effect with --no-train (nothing trains); drop it")
        rows = action.ladder_preview(names, pilot_s=pilot_s, **{**o, "say": (lambda m: None) if as_json else say})
        click.echo(json.dumps(rows, indent=1) if as_json else "\n".join(dry_lines(rows)))
        return
    try:
        done = action.ladder(names, train=not no_train, **o)
    except SweepInterrupted as e:
        from .stopped import training_stopped

        training_stopped("ladder", e.signame, "finished runs and the rungs' records are kept")
    if as_json:
        click.echo(json.dumps({"records": done.records, "files": [str(f) for f in done.files]}, indent=1,
                              default=str))
