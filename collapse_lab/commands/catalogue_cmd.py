"""The shell of ``figures`` and ``tables`` around ``collapse_lab.catalogue`` (their options:
``catalogue_options``): the options checked, ``--dry-run`` and ``--list`` printed, Ctrl-C
and ``--time-limit`` turned into exit statuses, a missing run's error given the command
that trains it."""
from __future__ import annotations

import json
from pathlib import Path

import click

from ..catalogue.planning import plan, smoke_paths
from ..errors import CollapseLabError
from .common import checked_data_root
from .options import chosen_precision


def begin(kind: str, names, preset: str, store: str, out: str, o: dict, flags: dict):
    """The part of ``figures``/``tables`` before rendering (``catalogue.session``): option
    checks, the entries of ``kind``, ``--dry-run`` and ``--list`` (handled here: None), the
    smoke store, then the session (runs planned, the missing trained, the context).
    ``o``: the catalogue options (``catalogue_options``); ``flags``: the command's own
    options that conflict with --list or --no-train."""
    from ..analysis.catalogue import pick
    from ..catalogue.session import open_session, output_folder
    from ..runspec.backend import check_catalogue
    from .slurm_options import check_backend

    check_catalogue(o["workers"], o["stack"], o["backend"], o["address"], o["list_"], o["no_train"],
                    lambda backend: check_backend(backend, o.get("slurm_flags") or {}),
                    **{**flags, "--dry-run": o["dry_run_"], "--time-limit": o["time_limit"]})
    if o["dry_run_"] and o["time_limit"]:
        raise CollapseLabError("--time-limit has no effect with --dry-run (nothing trains); drop it")
    from .options import check_pilot

    check_pilot(o.get("pilot_s"), o["dry_run_"])
    entries = pick(names, kind[:-1])
    if o["dry_run_"]:
        return dry_run(entries, o["smoke"], o["as_json"], None, o["keep"], presets=_given_presets(preset),
                       pilot_s=o.get("pilot_s"), workers=o["workers"], precision=o.get("precision"),
                       data_root=o.get("data_root"), overrides=o.get("overrides"))
    store, out = smoke_paths(o["smoke"], store, out, kind)
    say = (lambda m: click.echo(m if m.startswith(kind) else f"{kind}: {m}", err=True))
    runs = command_plan(preset, o["smoke"], o.get("precision"), o.get("data_root"), o.get("overrides"))
    out = output_folder(out, runs)
    if o["list_"]:
        _, per_entry, by_name = plan(entries, runs, store, lambda m: None, o["keep"])
        return list_entries(entries, per_entry, store, out, by_name, o["as_json"],
                            **({"suffix": "md"} if kind == "tables" else {}))
    from ..store.paths import check_output_folder

    check_output_folder(out, "--out")  # a read-only target is one line before anything trains or renders
    slurm = None
    if o["backend"] == "slurm" and not o["no_train"]:
        from .slurm_options import given_slurm

        slurm = given_slurm(o.get("slurm_flags") or {}, None, o["time_limit"])
    try:
        session = open_session(entries, runs, store, out, say, train=not o["no_train"], backend=o["backend"],
                               workers=o["workers"], stack=o["stack"], address=o["address"], keep=o["keep"],
                               time_limit=o["time_limit"], slurm=slurm,
                               drop_checkpoints=o["smoke"] and kind == "tables")
    except Exception as e:
        interrupted(e, say, "figures " if kind == "figures" else "")
        raise
    stop_if_late(session.failed, say)
    return session


def interrupted(e: Exception, say, prefix: str = "") -> None:
    """Ctrl-C or SIGTERM while runs trained (``sweep.backends.SweepInterrupted``): said, and the
    exit status 130 or 143; other errors pass."""
    from ..sweep.backends import SweepInterrupted

    if isinstance(e, SweepInterrupted):
        from ..signals import exit_status

        say(f"{prefix}interrupted ({e.signame}): finished runs are kept; the same command continues")
        raise SystemExit(exit_status(e.signame)) from None


def command_plan(preset: str, smoke: bool = False, precision: str | None = None, data_root: str | None = None,
                 overrides: dict | None = None):
    """The command's plan of runs (``collapse_lab.plan.Plan``): its preset, --smoke,
    --data-root, --precision and --set; one per command, shared by planning, training and
    rendering."""
    from ..plan import Plan

    return Plan(preset, smoke, checked_data_root(data_root), chosen_precision(precision), overrides or {})


def missing_line(err: Exception) -> str:
    """Why an entry did not render; a run it lacks comes with the command that trains it: this
    one as given (its --set, --store, --data-root), less --no-train."""
    from ..errors import RunMissing
    from ..timelimit import without_no_train

    return f"{err}; `{without_no_train()}` trains it" if isinstance(err, RunMissing) else str(err)


def stop_if_late(failed: list[dict], say) -> None:
    """``--time-limit`` stopped training: nothing renders; exit 75 with the command that continues."""
    from ..timelimit import EXIT_TIME_LIMIT, continue_command

    late = [f for f in failed if f["status"] == "time-limit"]
    if late:
        say(f"time limit: {len(late)} run(s) stopped after their last round that fit or not started; every complete "
            f"round is kept and nothing is rendered; continue with: {continue_command()}")
        raise SystemExit(EXIT_TIME_LIMIT)


def _given_presets(preset: str) -> tuple[str, ...]:
    """The presets a --dry-run plans: the one --preset named, or all three when none was given."""
    from click.core import ParameterSource

    ctx = click.get_current_context(silent=True)
    given = ctx is not None and ctx.get_parameter_source("preset") not in (None, ParameterSource.DEFAULT)
    return (preset,) if given else ("quick", "cpu", "paper")


def dry_run(entries, smoke: bool, as_json: bool, say, keep: str = "read",
            presets: tuple[str, ...] = ("quick", "cpu", "paper"), pilot_s: float | None = None,
            workers: int | None = None, precision: str | None = None, data_root: str | None = None,
            overrides: dict | None = None) -> None:
    """``--dry-run``: the plan of each preset (``plan.estimate``; every preset unless one was
    named) and each entry's checkpoint bytes (a run shared by entries counts in each; the
    total counts it once), as text or JSON."""
    from ..catalogue.planning import estimate_lines, estimates

    plans = estimates(entries, {preset: command_plan(preset, smoke, precision, data_root, overrides) for preset in presets}, keep, pilot_s, workers)
    click.echo(json.dumps({"smoke": smoke, "keep": keep, "presets": plans}, indent=1) if as_json
               else "\n".join(estimate_lines(plans, smoke, keep)))


def list_entries(entries, per_entry, store: Path, out: Path, by_name: dict, as_json: bool, suffix: str = "png") -> None:
    """``--list``: each entry's runs present and missing, and when it was last rendered."""
    from ..catalogue.planning import entry_lines, entry_rows

    rows = entry_rows(entries, per_entry, store, out, by_name, suffix)
    click.echo(json.dumps(rows, indent=1) if as_json else "\n".join(entry_lines(rows)))
