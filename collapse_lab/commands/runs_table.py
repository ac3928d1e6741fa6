"""``collapse-lab runs``: what a run store holds, one row per run."""
from __future__ import annotations

import json

import click

from .options import store_option
from ..analysis.run_rows import COLUMNS, cell, row
from ..errors import CollapseLabError



@click.command("runs")
@store_option()
@click.option("--where", "filters", multiple=True, metavar="FIELD=VALUE",
              help="Only runs whose run.json field has this value, e.g. method=moon, alpha=0.05 (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON on stdout (with every run.json field).")
def runs_cmd(store, filters, as_json):
    """The runs in a store as a table: name, data set, model, method, regularizer and beta,
    partition, seed, rounds complete/total, final test accuracy, status, size on disk."""
    from ..store import find_runs
    from .selection import warn

    wanted = {}
    for f in filters:
        if "=" not in f:
            raise CollapseLabError(f"--where {f!r}: write FIELD=VALUE, e.g. method=moon")
        k, v = f.split("=", 1)
        wanted[k.replace("-", "_")] = v
    from ..store.paths import check_store_for_reading

    runs = find_runs(check_store_for_reading(store), warn)
    rows = [row(r) for r in runs]
    if wanted:
        fields = set().union(*(r["meta"] for r in rows)) if rows else set()
        unknown = sorted(set(wanted) - fields)
        if unknown:
            raise CollapseLabError(f"--where {unknown[0]}: no run in {store} has that field; fields: "
                                   f"{', '.join(sorted(fields)[:30])}")
        rows = [r for r in rows if all(matches(r["meta"].get(k), v, k) for k, v in wanted.items())]
    if as_json:
        click.echo(json.dumps([{**{k: r[k] for k in COLUMNS}, "config": r["meta"]} for r in rows], indent=1))
        return
    if not rows:
        click.echo(f"no runs in {store}" + (" match the filters" if wanted else ""))
        return
    widths = {c: max(len(c), *(len(cell(r, c)) for r in rows)) for c in COLUMNS}
    click.echo("  ".join(c.ljust(widths[c]) for c in COLUMNS))
    for r in rows:
        click.echo("  ".join(cell(r, c).ljust(widths[c]) for c in COLUMNS))
    click.echo(f"{len(rows)} run(s), {sum(r['size'] for r in rows) / 1e6:.1f} MB")


def matches(stored, given: str, field: str) -> bool:
    """``--where FIELD=VALUE`` compares values, not spellings: alpha=0.50 matches 0.5,
    lr=1e-2 matches 0.01, local_eval=true matches true."""
    import math

    from ..config import parse_alpha

    if field == "alpha":
        try:
            return parse_alpha(stored) == parse_alpha(given)
        except CollapseLabError:
            return str(stored) == given
    if isinstance(stored, bool):
        return given.strip().lower() == str(stored).lower()
    if isinstance(stored, (int, float)):
        try:
            g = float(given)
        except ValueError:
            return False
        return g == stored or (math.isnan(g) and isinstance(stored, float) and math.isnan(stored))
    if stored is None:
        return given.strip().lower() in ("none", "null", "")
    if isinstance(stored, (dict, list)):
        import json

        try:
            return json.loads(given) == stored
        except ValueError:
            return False
    return str(stored) == given


