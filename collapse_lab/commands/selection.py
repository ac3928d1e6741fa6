"""The analysis commands' run options: --store/--run and the filters (read by
``analysis.select``), and warnings as one line on stderr."""
from __future__ import annotations

from pathlib import Path

import click

from ..analysis import select
from ..store import RunDir


def warn(msg: str) -> None:
    click.echo(f"warning: {msg}", err=True)


def select_runs(store: Path, alphas: tuple[str, ...], run_paths: tuple[str, ...], dataset: str | None = None,
                model: str | None = None, regs: tuple[str, ...] = (), methods: tuple[str, ...] = (),
                one_round: bool = False) -> list[RunDir]:
    """``analysis.select.select_runs`` with its warnings on stderr (``one_round``: the
    command reads one round the user named, or each run on its own)."""
    return select.select_runs(store, alphas, run_paths, dataset, model, regs, methods, warn=warn, one_round=one_round)
