"""What a ladder checks before it climbs, and its ``--dry-run`` text, as functions callable
from Python: each refusal is a ``CollapseLabError`` of one line naming the option."""
from __future__ import annotations

from pathlib import Path

from ..errors import CollapseLabError


def check_ladder(names, preset: str, rungs_file: str, only=(), no_train: bool = False, dry_run: bool = False,
                 workers: int | None = None, stack: int = 8, other_sample: str | None = None):
    """The figure entries NAMES and their rungs of ``rungs_file``, once every option is
    consistent: ``--no-train`` with nothing that trains, entries with claims, a
    ``--other-sample`` folder holding records, ``--rung`` names that ``rungs_file`` has."""
    from ..analysis.catalogue import pick
    from ..runspec.backend import check_common
    from .rungs import load_rungs

    check_common(workers, stack)
    if no_train and (dry_run or workers is not None or only):
        raise CollapseLabError(f"{'--dry-run' if dry_run else '--workers' if workers is not None else '--rung'} has "
                               "no effect with --no-train (nothing trains); drop it")
    entries = pick(names, "figure")
    from ..analysis import RENDERERS

    for e in entries:
        if not e.at(preset).claims and not hasattr(RENDERERS.get(e.renderer), "judged"):
            raise CollapseLabError(f"{e.name} has no claims to check; a ladder compares claims (choose entries "
                                   "with claims: `collapse-lab figures --list`)")
    if other_sample is not None and not (Path(other_sample) / "records").is_dir():
        raise CollapseLabError(f"--other-sample {other_sample}: " + ("no such folder" if not Path(other_sample).exists()
                               else "holds no records/ folder") + "; give the --out of a ladder run on another sample")
    rungs = load_rungs(rungs_file, [e.name for e in entries])
    if unknown := [r for r in only if r not in {g.name for g in rungs}]:
        raise CollapseLabError(f"--rung {unknown[0]}: no such rung in --rungs {rungs_file} for {', '.join(names)} "
                               f"(its rungs: {', '.join(g.name for g in rungs)})")
    return entries, rungs


def duration(s: float) -> str:
    return f"{s / 3600:.1f} h" if s >= 7200 else f"{s / 60:.0f} min" if s >= 60 else f"{s:.0f} s"


def _span(h) -> str:
    if h is None:
        return "not measured (a model the pilot could not build here)"
    from ..plan.estimate import hours_range  # one formatter of a pilot's range for every dry-run

    return f"{hours_range(*h)} of training steps"


def dry_lines(rows: list[dict]) -> list[str]:
    """``ladder --dry-run``'s text over ``climb.dry_rows``: a line per rung and the total."""
    lines = [f"{r['rung']}: {', '.join(r['entries']) or 'no entry'}; {r['runs']} run(s), {r['to_train']} to train, "
             f"about {duration(r['cpu_2core_hours'] * 3600)} on 2 cores or {duration(r['h100_hours'] * 3600)} on "
             "one H100 (estimated from the project's measurements on idle machines)"
             + (f"; on this machine now, by the pilot: {_span(r['here_hours'])}" if "here_hours" in r else "")
             + (f"; kept: {', '.join(r['kept'])}" if r["kept"] else "") for r in rows]
    if rows and "here_hours" not in rows[0]:
        lines.append("(--pilot 10 measures this machine as it is now, other work on its cores included, and gives "
                     "the range here)")
    cpu, gpu = sum(r["cpu_2core_hours"] for r in rows), sum(r["h100_hours"] for r in rows)
    return lines + [f"in all: {sum(r['to_train'] for r in rows)} run(s) to train, about {duration(cpu * 3600)} on 2 "
                    f"cores or {duration(gpu * 3600)} on one H100",
                    "(a rung: train options over the preset; each rung's claims are checked over its seeds and written "
                    "to --out: records/, LADDER.md, ladder.png; `collapse-lab ladder --help` says how they read)"]


def nothing_to_read(cells_: list[dict], store: Path, out: Path) -> bool:
    """``--no-train`` with nothing any rung could be written from: no kept record, no kept
    run evidence in ``out``, no complete run in ``store``."""
    from .cell_measures import complete

    live = [c for c in cells_ if "na" not in c]
    if any(c.get("kept") is not None for c in live) or any((out / "records" / "runs").glob("*.json")):
        return False
    return not store.is_dir() or not any(complete(store, r) for c in live for r in c["configs"])
