"""The papers' figures and tables as a library: plan an entry's runs, train the missing ones,
render, check the claims, and climb the ladder of scales (docs/api.md, docs/scale.md).

    from collapse_lab.catalogue import figures
    records = figures(["feddecorr-fig2"], store="checkpoints", out="figures")

The ``figures``, ``tables`` and ``ladder`` commands are a thin shell over this package.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable, Iterable


def _say(m: str) -> None:
    print(m, file=sys.stderr)


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


def _session(kind: str, names, preset, store, out, train, smoke, data_root, precision, overrides, keep, workers,
             stack, say):
    from ..analysis.catalogue import pick

    check_arguments(names, preset, overrides, keep, workers, stack)
    from ..plan import Plan
    from .overrides import parse
    from .planning import smoke_paths
    from .session import open_session, output_folder

    given = [f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in (overrides or {}).items()]
    runs = Plan(preset, smoke, data_root, precision, parse(given))
    store, out = smoke_paths(smoke, str(store), str(out), kind)
    return open_session(pick(list(names), kind[:-1]), runs, store, output_folder(out, runs), say, train=train,
                        workers=workers, stack=stack, keep=keep, drop_checkpoints=smoke and kind == "tables")


def figures(names: Iterable[str] = (), *, preset: str = "quick", store: str | Path = "checkpoints",
            out: str | Path = "figures", train: bool = True, smoke: bool = False, data_root: str | None = None,
            precision: str | None = None, overrides: dict | None = None, keep: str = "read",
            workers: int | None = None, stack: int = 8, say: Callable[[str], None] = _say) -> list[dict]:
    """Render the named figures (default: all) as ``collapse-lab figures`` does: the runs the
    store lacks trained first (unless ``train`` is False), each figure written to ``out``
    with its JSON, the claims merged into ``out/CLAIMS-<preset>.md``. Returns one record per
    entry (its files, claims and verdicts, or ``error`` / ``not_rendered``). ``overrides``:
    ``--set``'s ``{key: value}``; ``precision`` None is ``--precision auto``."""
    from ..analysis.claims_file import merge_claims
    from .render import figure_record

    run = _session("figures", names, preset, store, out, train, smoke, data_root, precision, overrides, keep,
                   workers, stack, say)
    records = [figure_record(e, run) for e in run.entries]
    if records:
        merge_claims(run.out, preset + ("-smoke" if smoke else ""), records)
    return records


def tables(names: Iterable[str] = (), *, preset: str = "quick", store: str | Path = "checkpoints",
           out: str | Path = "tables", train: bool = True, smoke: bool = False, data_root: str | None = None,
           precision: str | None = None, overrides: dict | None = None, compare_paper: bool = False,
           keep: str = "read", workers: int | None = None, stack: int = 8,
           say: Callable[[str], None] = _say) -> list[dict]:
    """The named tables (default: all) as ``collapse-lab tables`` writes them (md, csv, tex,
    json in ``out``); one record per table (its cells with the runs they average)."""
    from .render import table_record

    run = _session("tables", names, preset, store, out, train, smoke, data_root, precision, overrides, keep,
                   workers, stack, say)
    return [table_record(e, run, compare_paper)[0] for e in run.entries]
