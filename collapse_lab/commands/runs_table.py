"""``collapse-lab runs``: what a run store holds, one row per run."""
from __future__ import annotations

import json

import click

from .options import store_option
from ..analysis.labels import partition_text, reg_text
from ..errors import CollapseLabError

COLUMNS = ("run", "dataset", "model", "method", "reg", "partition", "seed", "rounds", "epochs", "lr", "acc", "status",
           "size")


def row(run) -> dict:
    m = run.meta
    acc = None
    for e in reversed(run.metrics()):
        if e.get("event") == "round":
            acc = e.get("test_acc")
            break
    size = run.size_bytes()
    return {"run": run.path.name, "dataset": m.get("dataset"), "model": m.get("model"), "method": m.get("method"),
            "reg": reg_text(m), "partition": partition_text(m), "seed": m.get("seed"),
            "rounds": f"{m.get('rounds_complete', 0)}/{m.get('rounds')}", "epochs": m.get("local_epochs"),
            "lr": m.get("lr"), "acc": acc, "status": run.status + (f" after round {m.get('rounds_complete', 0)}" if run.status == "interrupted" else ""),
            "size": size, "meta": m}


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
    widths = {c: max(len(c), *(len(_cell(r, c)) for r in rows)) for c in COLUMNS}
    click.echo("  ".join(c.ljust(widths[c]) for c in COLUMNS))
    for r in rows:
        click.echo("  ".join(_cell(r, c).ljust(widths[c]) for c in COLUMNS))
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


def _cell(r: dict, c: str) -> str:
    v = r[c]
    if c == "acc":
        return "" if v is None else f"{v:.4f}"
    if c == "size":
        return f"{v / 1e6:.1f} MB"
    return str(v)
