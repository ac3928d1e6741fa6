"""What a run store holds (``collapse-lab runs``): one row per run, optionally only those
whose run.json fields have the given values (``where``, the one run filter)."""
from __future__ import annotations

from ..errors import CollapseLabError
from .selection import warn_stderr


def runs(store="checkpoints", *, where: dict | None = None, warn=warn_stderr) -> list[dict]:
    """One row per run of ``store`` (``analysis.run_rows``: name, data set, model, method,
    regularizer and beta, partition, seed, rounds, final test accuracy, status, size, and
    ``meta``, its run.json), only those whose fields equal ``where``'s values as
    ``where.value_matches`` compares them (alpha as train writes it)."""
    from ..analysis.run_rows import row
    from ..store import find_runs
    from ..store.paths import check_store_for_reading
    from ..where import value_matches

    wanted = {k.replace("-", "_"): v for k, v in (where or {}).items()}
    rows = [row(r) for r in find_runs(check_store_for_reading(store), warn)]
    if wanted:
        fields = set().union(*(r["meta"] for r in rows)) if rows else set()
        unknown = sorted(set(wanted) - fields)
        if unknown:
            raise CollapseLabError(f"--where {unknown[0]}: no run in {store} has that field; fields: "
                                   f"{', '.join(sorted(fields)[:30])}")
        rows = [r for r in rows if all(value_matches(r["meta"].get(k), v, k) for k, v in wanted.items())]
    return rows
