"""A table spec states each run once: rows x columns, their cells derived (issue 37).

``params`` of a table entry::

    base:    {<preset>: {options every cell shares}}
    rows:    {<row label>: {method: <printed method>, variant: ..., ref: [<method>, <regularizer>],
              <preset>: {options}}}
    columns: {<printed column>: {<preset>: {options}}}
    cells:   [[<row>, <column>, <printed setting>], ...,
              [<row>, <column>, <setting>, {<preset>: {options or not_available}, metric: ...}]]

A cell's options at a preset are base < row < column < its own (its own ``not_available``
replaces them). The printed number it sits beside is found by key, (``ref``, column,
setting) in ``reference/all_tables_long.csv``, never by position. The entry's runs at a
preset are the available cells' options, each once (``runs.<preset>`` keeps ``base`` and
``seeds``); ``expand`` returns both.
"""
from __future__ import annotations

import json

from ..errors import CollapseLabError

CELL_KEYS = ("row", "method", "variant", "column", "setting", "ref")


def expand(params: dict, presets, where: str) -> tuple[list[dict], dict[str, list[dict]]]:
    """The full cells (``row``, ``method``, ``variant``, ``column``, ``setting``, ``ref``,
    per preset the options, ``metric`` where a cell has its own) and per preset the runs'
    option sets (``grid.combo``), each once, in cell order."""
    base, rows, cols = params.get("base") or {}, params.get("rows") or {}, params.get("columns") or {}
    cells, combos = [], {p: [] for p in presets}
    seen = {p: set() for p in presets}
    for i, item in enumerate(params.get("cells") or []):
        if not isinstance(item, list) or len(item) not in (3, 4):
            raise CollapseLabError(f"{where}: cell {i} must be [row, column, setting] or [row, column, setting, "
                                   "{own options}]")
        row, col, setting = item[:3]
        own = item[3] if len(item) == 4 else {}
        if row not in rows:
            raise CollapseLabError(f"{where}: cell {i} names row {row!r}, not in rows")
        if col not in cols:
            raise CollapseLabError(f"{where}: cell {i} names column {col!r}, not in columns")
        r = rows[row]
        cell = {"row": row, "method": r.get("method", row), "variant": r.get("variant", ""), "column": col,
                "setting": str(setting), "ref": list(r.get("ref") or [])}
        if "metric" in own:
            cell["metric"] = own["metric"]
        for p in presets:
            mine = own.get(p) or {}
            if "not_available" in mine:
                cell[p] = {"not_available": mine["not_available"]}
                continue
            cell[p] = {**(base.get(p) or {}), **(r.get(p) or {}), **(cols[col].get(p) or {}), **mine}
            k = json.dumps(cell[p], sort_keys=True)
            if k not in seen[p]:
                seen[p].add(k)
                combos[p].append(cell[p])
        cells.append(cell)
    return cells, combos


def with_derived(runs: dict, params: dict, where: str) -> tuple[dict, dict]:
    """The entry's ``runs`` and ``params`` with the cells and each preset's grid derived
    (an entry without ``rows``, a figure, is returned as it is)."""
    if "rows" not in params:
        return runs, params
    # the presets the runs or any option names (a table with no runs still says why per preset)
    layers = [params.get("base") or {}, *(params.get("rows") or {}).values(), *(params.get("columns") or {}).values(),
              *(item[3] for item in params.get("cells") or [] if len(item) == 4)]
    presets = [p for p in ("quick", "cpu", "paper") if p in runs or any(p in d for d in layers)]
    cells, combos = expand(params, presets, where)
    for p, spec in runs.items():
        if "grid" in (spec or {}):
            raise CollapseLabError(f"{where}: runs.{p} has a grid; a table's runs are its cells (drop the grid)")
    runs = {p: {**spec, "grid": {"combo": combos[p]}} for p, spec in runs.items()}
    return runs, {**params, "cells": cells}


def _text(v) -> str:
    """A reference field as text; an empty one (pandas' NaN) as ''."""
    return "" if isinstance(v, float) and v != v else str(v)


def pair(cells: list[dict], ref, where: str) -> list:
    """Each cell's printed row (``ref`` the reference's rows of the table), by key: the
    row's (method, regularizer), the column and the setting. Every printed cell is used
    once; a cell without a printed number is an error."""
    printed = {}
    for r in ref.itertuples():
        printed[tuple(_text(v) for v in (r.method, r.regularizer, r.column, r.setting))] = r
    out, used = [], set()
    for c in cells:
        key = (*map(str, c["ref"]), c["column"], c["setting"])
        if key not in printed:
            raise CollapseLabError(f"{where}: cell {c['row']} / {c['column']} ({c['setting']}) has no printed value "
                                   f"{key} in the reference")
        used.add(key)
        out.append(printed[key])
    if len(used) != len(printed):
        missing = sorted(set(printed) - used)[:2]
        raise CollapseLabError(f"{where}: {len(printed) - len(used)} printed cell(s) have no cell in the spec, "
                               f"e.g. {missing}")
    return out
