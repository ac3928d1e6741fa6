"""The papers' claims on a ladder of scales (``collapse-lab ladder``; docs/scale.md): per rung
(a set of train options laid over a preset) and entry, the runs trained or read, the figure
rendered, the regime measured and each claim judged over seeds; the records kept, and
LADDER.md, ladder.csv, ladder.json and ladder.png written (``catalogue.climb``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..errors import CollapseLabError
from .selection import say_stderr



@dataclass
class Laddered:
    """What ``ladder`` wrote: one record per rung and entry (``na`` where a rung does not
    apply or its runs are missing) and the files; ``kept_now``: runs whose evidence was kept
    by a ``train=False`` call that found no rung complete (then no file is written)."""
    records: list[dict]
    files: list[Path] = field(default_factory=list)
    kept_now: int = 0


def _cells(names, rungs, preset, store, out, only, workers, stack, train, other_sample, seed_base, data_root,
           precision, dry_run, say):
    """The ladder's cells (rung x entry) checked, with the data matched against kept records."""
    from ..catalogue.climb import cells, match_data
    from ..catalogue.ladder_checks import check_ladder, nothing_to_read
    from ..data_root import check_data_root

    entries, rung_list = check_ladder(list(names), preset, rungs, tuple(only), not train, dry_run, workers, stack,
                                      other_sample)
    if not dry_run:
        from ..store.paths import check_output_folder

        check_output_folder(out, "--out")  # a read-only target is one line before any rung trains
    root = None if data_root is None else check_data_root(data_root)
    cells_ = cells(entries, rung_list, preset, store, f"--rungs {rungs}", root,
                   None if precision == "auto" else precision, seed_base)
    if all("na" in c for c in cells_):
        raise CollapseLabError(f"--rungs {rungs}: no rung applies to {', '.join(names)}")
    unread = match_data(cells_, store, out, dry_run, root, not train)
    if not train and nothing_to_read(cells_, store, out):
        raise CollapseLabError(f"--no-train: no rung has its runs in --store {store} or a record in --out {out}; "
                               "drop --no-train to train them, or point --store/--out at a ladder's")
    if not train and unread:
        say(f"ladder: the data cannot be read here, so each kept record is taken by its runs and rounds, the "
            f"images it names unchecked ({unread[0]})")
    return entries, rung_list, cells_, unread


def ladder(names, *, rungs: str = "rungs", preset: str = "cpu", store: str | Path = "checkpoints",
           out: str | Path = "ladder", only=(), workers: int | None = None, stack: int = 8, train: bool = True,
           other_sample: str | None = None, seed_base: int = 0, data_root: str | None = None,
           precision: str | None = None, say: Callable[[str], None] = say_stderr) -> Laddered:
    """Climb ``rungs`` (a YAML file or a packaged ladder: ``rungs``, ``rungs-gpu``) for the
    figure entries ``names`` from ``preset``: train what the store lacks (only the rungs in
    ``only``, when given; none with ``train`` False), keep each run's evidence and each
    rung's record in ``out/records``, and write the ladder's files. ``other_sample``: the
    ``out`` of the same ladder on other data (a verdict that differs there is not resolved);
    ``seed_base`` shifts every seed. Ctrl-C raises ``SweepInterrupted``; what finished stays."""
    from ..catalogue.climb import climb, other_records
    from ..catalogue.ladder_report import write
    from ..catalogue.rungs import rungs_path

    store, out = Path(store), Path(out)
    entries, rung_list, cells_, _ = _cells(names, rungs, preset, store, out, only, workers, stack, train,
                                           other_sample, seed_base, data_root, precision, False, say)
    say(f"ladder: {len(rung_list)} rung(s) x {len(entries)} entr{'y' if len(entries) == 1 else 'ies'} at --preset "
        f"{preset}, store {store}, records in {out / 'records'}")
    other = other_records(other_sample, cells_) if other_sample else None
    records = climb(cells_, preset, store, out, workers, stack, say, not train, set(only) or None)
    if not train and all("na" in r for r in records):
        n = sum(c.get("kept_now", 0) for c in cells_)
        if not n:
            raise CollapseLabError(f"--no-train: no rung has its runs in --store {store} or a record in --out {out}; "
                                   "drop --no-train to train them, or point --store/--out at a ladder's")
        say(f"ladder: no rung has all its runs yet; the evidence of {n} run(s) in --store kept in "
            f"{out / 'records' / 'runs'} (a ladder with this --out trains only the others)")
        return Laddered(records, [], n)
    files = write(out, records, f"ladder: {', '.join(names)} at --preset {preset} ({rungs_path(rungs).name})", other)
    say(f"ladder: {out / 'LADDER.md'}, {out / 'ladder.png'} (rungs x claims, coloured by verdict)")
    return Laddered(records, list(files))


def ladder_preview(names, *, rungs: str = "rungs", preset: str = "cpu", store: str | Path = "checkpoints",
                   out: str | Path = "ladder", only=(), workers: int | None = None, stack: int = 8,
                   other_sample: str | None = None, seed_base: int = 0, data_root: str | None = None,
                   precision: str | None = None, pilot_s: float | None = None,
                   say: Callable[[str], None] = say_stderr) -> list[dict]:
    """``ladder --dry-run``: each rung's runs, those to train and their estimated time (with
    ``pilot_s``, also measured on this machine now, as a range); nothing trains."""
    from ..catalogue.climb import dry_rows

    store, out = Path(store), Path(out)
    _, _, cells_, unread = _cells(names, rungs, preset, store, out, only, workers, stack, True, other_sample,
                                  seed_base, data_root, precision, True, say)
    if unread:
        say(f"ladder: no data to match kept records against, so every run is counted ({unread[0]})")
    cells_ = [c for c in cells_ if not only or c["rung"].name in only]
    here = None
    if pilot_s is not None:
        from ..plan.pilot import pilot

        here = pilot([r for c in cells_ if "na" not in c for r in c["configs"]], pilot_s, workers)
    return dry_rows(cells_, store, out, here)
