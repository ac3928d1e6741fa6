"""Render the papers' figures and tables (``collapse-lab figures``, ``collapse-lab tables``):
the entries' runs planned at a preset, the missing ones trained (locally, on Ray or SLURM),
each entry rendered with its numbers and its claims checked (``catalogue``)."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable, Iterable

from .selection import say_stderr



class Rendered(list):
    """One record per entry (its files, claims and verdicts, or ``error``), with what the
    call did: ``failed_runs`` (training failures), ``train_seconds``, ``seconds``, ``out``
    (the folder written, ``out/set-K=V,...`` with overrides), and ``stopped``
    (``"time-limit"``: the time limit stopped training and nothing rendered; else None)."""

    def __init__(self, records, failed_runs, train_seconds, seconds, out, stopped=None):
        super().__init__(records)
        self.failed_runs, self.train_seconds, self.seconds = failed_runs, train_seconds, seconds
        self.out, self.stopped = Path(out), stopped


def check_arguments(names, preset, overrides, keep, workers, stack) -> None:
    """What the command line refuses, refused from Python too, in the same one line (a
    ``CollapseLabError``): a bare string for the names, an unknown preset or keep, overrides
    that are not a mapping, workers or stack below 1."""
    from ..analysis.catalogue import PRESETS
    from ..errors import CollapseLabError
    from ..runspec.backend import check_common

    if isinstance(names, (str, bytes)):
        raise CollapseLabError(f"names: give a list of entry names, e.g. [{names!r}] (a bare string would be read "
                               "letter by letter)")
    if preset not in PRESETS:
        raise CollapseLabError(f"--preset {preset}: choose one of {', '.join(PRESETS)}")
    if overrides is not None and not isinstance(overrides, dict):
        raise CollapseLabError(f"overrides: give a mapping such as {{'lr': 0.05}} (the command's --set KEY=VALUE), "
                               f"not {type(overrides).__name__} {overrides!r}")
    if keep not in ("read", "all"):
        raise CollapseLabError(f"--keep {keep}: choose read or all")
    for name, v in (("workers", workers), ("stack", stack)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise CollapseLabError(f"--{name} {v!r}: give a whole number >= 1")
    check_common(workers, stack)


def plan_of(preset: str, smoke: bool = False, precision: str | None = None, data_root: str | None = None,
            overrides: dict | None = None):
    """The call's plan of runs (``collapse_lab.plan.Plan``): its preset, smoke, data root,
    precision (``auto``: None) and overrides, checked; shared by planning, training and rendering."""
    from ..catalogue.overrides import parse
    from ..data_root import check_data_root
    from ..plan import Plan

    given = [f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in (overrides or {}).items()]
    return Plan(preset, smoke, None if data_root is None else check_data_root(data_root), None if precision == "auto" else precision, parse(given))


def _session(kind: str, o: dict):
    """Entries picked, runs planned, the missing trained: the ``catalogue.session.Session``
    (``o``: every argument of ``figures``/``tables``)."""
    from ..analysis.catalogue import pick
    from ..catalogue.planning import smoke_paths
    from ..catalogue.session import open_session, output_folder
    from ..runspec.backend import check_catalogue
    from ..store.paths import check_output_folder

    names, say = o["names"], o["say"]
    check_arguments(names, o["preset"], o["overrides"], o["keep"], o["workers"], o["stack"])
    check_catalogue(o["workers"], o["stack"], o["backend"], o["address"], no_train=not o["train"],
                    **{"--time-limit": o["time_limit"]})
    entries = pick(list(names), kind[:-1])
    runs = plan_of(o["preset"], o["smoke"], o["precision"], o["data_root"], o["overrides"])
    store, out = smoke_paths(o["smoke"], str(o["store"]), str(o["out"]), kind)
    out = output_folder(out, runs)
    check_output_folder(out, "--out")  # a read-only target is one line before anything trains or renders
    return open_session(entries, runs, store, out, say, train=o["train"], backend=o["backend"], workers=o["workers"],
                        stack=o["stack"], address=o["address"], keep=o["keep"], time_limit=o["time_limit"],
                        slurm=o["slurm"], drop_checkpoints=o["smoke"] and kind == "tables")


def _late(session) -> bool:
    return any(f["status"] == "time-limit" for f in session.failed)


def figures(names: Iterable[str] = (), *, preset: str = "quick", store: str | Path = "checkpoints",
            out: str | Path = "figures", train: bool = True, smoke: bool = False, data_root: str | None = None,
            precision: str | None = None, overrides: dict | None = None, keep: str = "read",
            backend: str = "local", workers: int | None = None, stack: int = 8, address: str | None = None,
            time_limit: str | None = None, slurm=None, explain: Callable[[Exception], str] = str,
            say: Callable[[str], None] = say_stderr) -> Rendered:
    """Render the named figures (default: all): the runs the store lacks trained first
    (unless ``train`` is False; on ``backend`` local, ray at ``address``, or slurm with
    ``slurm``, a ``sweep.slurm_options.SlurmOptions``), each figure written to ``out`` with its JSON,
    the claims merged into ``out/CLAIMS-<preset>.md``. ``overrides``: ``--set``'s
    ``{key: value}``; ``precision`` None is ``auto``; ``time_limit``: training stops by it
    (then nothing renders: ``stopped``); ``explain``: an entry's error as said (the command
    adds how to train a missing run). Ctrl-C while training raises ``SweepInterrupted``."""
    o = dict(locals())  # the options as given: every one reaches the session
    from ..catalogue.claims_file import merge_claims
    from ..catalogue.render import figure_record

    run = _session("figures", o)
    if _late(run):
        return Rendered([], run.failed, run.t_train, time.time() - run.t0, run.out, "time-limit")
    records = [figure_record(e, run, explain) for e in run.entries]
    if records:
        merge_claims(run.out, preset + ("-smoke" if smoke else ""), records)
    return Rendered(records, run.failed, run.t_train, time.time() - run.t0, run.out)


def tables(names: Iterable[str] = (), *, preset: str = "quick", store: str | Path = "checkpoints",
           out: str | Path = "tables", train: bool = True, smoke: bool = False, data_root: str | None = None,
           precision: str | None = None, overrides: dict | None = None, compare_paper: bool = False,
           keep: str = "read", backend: str = "local", workers: int | None = None, stack: int = 8,
           address: str | None = None, time_limit: str | None = None, slurm=None,
           explain: Callable[[Exception], str] = str, say: Callable[[str], None] = say_stderr) -> Rendered:
    """The named tables (default: all) as ``figures`` renders figures (md, csv, tex, json in
    ``out``); one record per table (its cells with the runs they average) and its markdown
    in ``.markdown``; ``compare_paper``: the paper's printed value beside each cell."""
    o = dict(locals())  # the options as given: every one reaches the session
    from ..catalogue.render import table_record

    run = _session("tables", o)
    if _late(run):
        return Rendered([], run.failed, run.t_train, time.time() - run.t0, run.out, "time-limit")
    records, markdown = [], []
    for e in run.entries:
        rec, md = table_record(e, run, compare_paper, explain)
        records.append(rec)
        markdown.append(md)
    result = Rendered(records, run.failed, run.t_train, time.time() - run.t0, run.out)
    result.markdown = markdown  # each table's markdown (None where it did not render)
    return result


def preview(kind: str, names=(), *, presets=("quick", "cpu", "paper"), smoke: bool = False,
            precision: str | None = None, data_root: str | None = None, overrides: dict | None = None,
            keep: str = "read", pilot_s: float | None = None, workers: int | None = None) -> dict:
    """``figures``/``tables --dry-run`` (``kind``): per preset the entries' runs, their
    checkpoint bytes (a run shared by entries counts in each; the total once) and compute time
    per device class (``plan.estimate``; ``pilot_s``: measured here too). Nothing trains."""
    from ..analysis.catalogue import pick
    from ..catalogue.planning import estimates

    return estimates(pick(list(names), kind[:-1]), {p: plan_of(p, smoke, precision, data_root, overrides)
                                                    for p in presets}, keep, pilot_s, workers)


def listing(kind: str, names=(), *, preset: str = "quick", store="checkpoints", out="figures", smoke: bool = False,
            precision: str | None = None, data_root: str | None = None, overrides: dict | None = None,
            keep: str = "read") -> list[dict]:
    """``figures``/``tables --list``: each entry's runs present and missing in ``store``, and
    when it was last rendered in ``out``."""
    from ..analysis.catalogue import pick
    from ..catalogue.planning import entry_rows, plan, smoke_paths
    from ..catalogue.session import output_folder

    entries = pick(list(names), kind[:-1])
    store, out = smoke_paths(smoke, str(store), str(out), kind)
    runs = plan_of(preset, smoke, precision, data_root, overrides)
    _, per_entry, by_name = plan(entries, runs, store, lambda m: None, keep)
    return entry_rows(entries, per_entry, store, output_folder(out, runs), by_name, "md" if kind == "tables" else "png")
