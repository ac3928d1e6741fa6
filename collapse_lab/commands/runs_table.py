"""``collapse-lab runs``: what a run store holds, one row per run."""
from __future__ import annotations

import json

import click

from ..analysis.run_rows import COLUMNS
from ..errors import CollapseLabError
from .options import json_option, store_option


@click.command("runs")
@store_option()
@click.option("--where", "filters", multiple=True, metavar="FIELD=VALUE",
              help="Only runs whose run.json field has this value, e.g. method=moon, alpha=0.05 (repeatable).")
@json_option
def runs_cmd(store, filters, as_json):
    """The runs in a store as a table: name, data set, model, method, regularizer and beta,
    partition, seed, rounds complete/total, final test accuracy, status, size on disk."""
    from ..actions.runs import runs
    from .selection import warn

    wanted = {}
    for f in filters:
        if "=" not in f:
            raise CollapseLabError(f"--where {f!r}: write FIELD=VALUE, e.g. method=moon")
        k, v = f.split("=", 1)
        wanted[k] = v
    rows = runs(store, where=wanted, warn=warn)
    if as_json:
        click.echo(json.dumps([{**{k: r[k] for k in COLUMNS}, "config": r["meta"]} for r in rows], indent=1))
        return
    if not rows:
        click.echo(f"no runs in {store}" + (" match the filters" if wanted else ""))
        return
    from ..analysis.text import runs_lines

    click.echo("\n".join(runs_lines(rows)))
