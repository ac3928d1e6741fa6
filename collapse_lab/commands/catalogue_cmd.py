"""The shell of ``figures`` and ``tables`` around ``actions.figures`` (their options:
``catalogue_options``): the command-line-only checks, ``--dry-run`` and ``--list`` printed,
Ctrl-C and ``--time-limit`` turned into exit statuses, a missing run's error given the
command that trains it."""
from __future__ import annotations

import json

import click



def run_action(kind: str, names, preset: str, store: str, out: str, o: dict, flags: dict, **own):
    """``figures``/``tables`` from the command line: the flags' conflicts checked, ``--dry-run``
    and ``--list`` answered here (None), else ``actions.figures``'s function of ``kind``
    called with every option (``own``: the command's own) and its ``Rendered`` returned.
    ``o``: the catalogue options (``catalogue_options``); ``flags``: the command's own
    options that conflict with --list or --no-train."""
    from ..actions import figures as action
    from ..signals import SweepInterrupted
    from .stopped import training_stopped
    from ..runspec.backend import check_catalogue, check_pilot

    check_catalogue(o["workers"], o["stack"], o["backend"], o["address"], o["list_"], o["no_train"],
                    o.get("slurm_flags") or {},
                    **{**flags, "--dry-run": o["dry_run_"], "--time-limit": o["time_limit"]})
    check_pilot(o.get("pilot_s"), o["dry_run_"])
    if o["dry_run_"] or o["list_"]:
        return (dry_run if o["dry_run_"] else list_entries)(kind, names, preset, store, out, o)
    slurm = None
    if o["backend"] == "slurm" and not o["no_train"]:
        from ..sweep.slurm_flags import given_slurm

        slurm = given_slurm(o.get("slurm_flags") or {}, None, o["time_limit"])
    say = (lambda m: click.echo(m if m.startswith(kind) else f"{kind}: {m}", err=True))
    try:
        result = getattr(action, kind)(
            names, preset=preset, store=store, out=out, train=not o["no_train"], smoke=o["smoke"],
            data_root=o["data_root"], precision=o["precision"], overrides=o["overrides"], keep=o["keep"],
            backend=o["backend"], workers=o["workers"], stack=o["stack"], address=o["address"],
            time_limit=o["time_limit"], slurm=slurm, explain=missing_line, say=say, **own)
    except SweepInterrupted as e:
        training_stopped(kind, e.signame)
    if result.stopped == "time-limit":
        _say_late(result.failed_runs, say)
    return result


def missing_line(err: Exception) -> str:
    """Why an entry did not render; a run it lacks comes with the command that trains it: this
    one as given (its --set, --store, --data-root), less --no-train."""
    from ..errors import RunMissing
    from ..timelimit import without_no_train

    return f"{err}; `{without_no_train()}` trains it" if isinstance(err, RunMissing) else str(err)


def _say_late(failed: list[dict], say) -> None:
    """``--time-limit`` stopped training: nothing renders; exit 75 with the command that continues."""
    from ..timelimit import EXIT_TIME_LIMIT, continue_command

    late = [f for f in failed if f["status"] == "time-limit"]
    say(f"time limit: {len(late)} run(s) stopped after their last round that fit or not started; every complete "
        f"round is kept and nothing is rendered; continue with: {continue_command()}")
    raise SystemExit(EXIT_TIME_LIMIT)


def _given_presets(preset: str) -> tuple[str, ...]:
    """The presets a --dry-run plans: the one --preset named, or all three when none was given."""
    from click.core import ParameterSource

    ctx = click.get_current_context(silent=True)
    given = ctx is not None and ctx.get_parameter_source("preset") not in (None, ParameterSource.DEFAULT)
    return (preset,) if given else ("quick", "cpu", "paper")


def dry_run(kind: str, names, preset: str, store, out, o: dict) -> None:
    """``--dry-run``: each preset's plan (every preset unless one was named), text or JSON."""
    from ..actions.figures import preview
    from ..catalogue.planning import estimate_lines

    plans = preview(kind, names, presets=_given_presets(preset), smoke=o["smoke"], precision=o["precision"],
                    data_root=o["data_root"], overrides=o["overrides"], keep=o["keep"], pilot_s=o.get("pilot_s"),
                    workers=o["workers"])
    click.echo(json.dumps({"smoke": o["smoke"], "keep": o["keep"], "presets": plans}, indent=1) if o["as_json"]
               else "\n".join(estimate_lines(plans, o["smoke"], o["keep"])))


def list_entries(kind: str, names, preset: str, store, out, o: dict) -> None:
    """``--list``: each entry's runs present and missing, and when it was last rendered."""
    from ..actions.figures import listing
    from ..catalogue.planning import entry_lines

    rows = listing(kind, names, preset=preset, store=store, out=out, smoke=o["smoke"], precision=o["precision"],
                   data_root=o["data_root"], overrides=o["overrides"], keep=o["keep"])
    click.echo(json.dumps(rows, indent=1) if o["as_json"] else "\n".join(entry_lines(rows)))
