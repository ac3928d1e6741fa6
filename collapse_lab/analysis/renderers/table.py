"""A table of the papers, cell by cell beside the printed one: the rows and columns are the
paper's (its printed cells, ``reference/``, found by key: ``analysis/table_spec.py``); each
cell's runs are the spec's options for it at the preset (rows x columns), averaged over seeds.

Metrics: ``final`` (test accuracy % of the last round's global model), ``final_mean_last``
(its mean over the last 10 % of rounds), ``mean_last:N`` (over the last N rounds: FedETF
reports the mean of the last 50 of 1000, ``mean_last:50``) or ``mean_last:P%`` (the last P %
of the rounds: the same share at a shorter preset), ``domain_acc:NAME`` (the last round's
accuracy on one domain's test samples; ``domain_acc:avg`` their mean over the domains, as
FedBN and the journal's Table 3 report), ``minutes_per_round`` (``train_seconds`` / rounds / 60 from ``run.json``, runs trained on
their own, on the device ``run.json`` names).

Derived rows: the paper's improvement rows (``improvement``: +ETF minus its base; FedETF
minus FedAvg), and for every method with and without FedDecorr a row ``Δ FedDecorr``
(ours and the paper's, both differences). A cell the toolkit cannot produce says why
(``not_available``); the table command lists them."""
from __future__ import annotations

import numpy as np

from ...errors import CollapseLabError
from ...store import RunDir, run_path
from ...store.naming import in_stored_precisions
from .. import RENDERERS
from ..context import Context
from ..table_spec import pair
from .accuracy import accuracy_curve, tail_mean

REFERENCE_CSV = "all_tables_long.csv"


def run_value(run, metric: str) -> float:
    if metric == "minutes_per_round":
        m = run.meta
        if not m.get("train_seconds") or not m.get("rounds_complete"):
            raise CollapseLabError(f"{run.path.name}: no train_seconds in run.json to time a round")
        return float(m["train_seconds"]) / int(m["rounds_complete"]) / 60.0
    if metric.startswith("domain_acc:"):
        return domain_acc(run, metric.split(":", 1)[1])
    _, y = accuracy_curve(run)
    if metric.startswith("mean_last:"):
        return mean_last(y, metric.split(":", 1)[1], cut=bool(run.meta.get("smoke")))
    return float(y[-1]) if metric == "final" else tail_mean(y)


def mean_last(y, n: str, cut: bool = False) -> float:
    """The mean accuracy over the last ``n`` rounds (``"50"``) or the last share of the
    rounds after round 0 (``"5%"``, at least one). ``cut``: a smoke run, cut to one round,
    averages the rounds it has (its window is cut with it) instead of being refused."""
    rounds = len(y) - 1
    try:
        k = max(1, int(round(float(n[:-1]) / 100 * rounds))) if n.endswith("%") else int(n)
    except ValueError:
        raise CollapseLabError(f"metric mean_last:{n}: give a number of rounds or a percentage") from None
    if cut:
        k = min(k, rounds)
    if not 1 <= k <= rounds:
        raise CollapseLabError(f"metric mean_last:{n}: the run has {rounds} rounds")
    return float(np.mean(y[-k:]))


def domain_acc(run, name: str) -> float:
    """Test accuracy % of the last round on domain ``name`` (``avg``: the mean over domains)."""
    last = next((e for e in reversed(run.metrics()) if e.get("event") == "round"), None)
    names = run.meta.get("domains") or []
    if last is None or "domain_test_acc" not in last or not names:
        raise CollapseLabError(f"{run.path.name}: no per-domain accuracy in its metrics (a domain data set's runs "
                               "record it); retrain it")
    accs = last["domain_test_acc"]
    if name == "avg":
        vals = [a for a in accs if a is not None]
        return 100.0 * float(np.mean(vals))
    if name not in names or accs[names.index(name)] is None:
        raise CollapseLabError(f"{run.path.name}: no test samples of domain {name!r} (its domains: {', '.join(names)})")
    return 100.0 * float(accs[names.index(name)])


def metric_of(p: dict, preset: str) -> str:
    """A spec's metric, or its metric at this preset (``{quick: ..., paper: ...}``)."""
    m = p["metric"]
    return m[preset] if isinstance(m, dict) else m


def reference(table: str):
    import pandas as pd

    from ..catalogue import reference_file

    d = pd.read_csv(reference_file(REFERENCE_CSV))
    return d[d.table == table]


def _num(v) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if np.isnan(f) else f


def _fill(cell: dict, c: dict, p: dict, entry, opts: dict, ctx: Context, devices: set, scalings: set) -> None:
    """A cell's own numbers: the mean and spread of its runs' metric, the runs, the data; or
    why it is not available (a run not complete). Each run's device and FedDecorr scaling
    are added to the table's."""
    values, runs = [], []
    cfgs = ctx.plan.cell(entry, opts)
    if ctx.precision is None:  # a stored run keeps the precision it trained in
        cfgs = in_stored_precisions(ctx.store, cfgs)
    for cfg in cfgs:
        path = run_path(ctx.store, cfg)
        run = RunDir(path)
        if not run.is_complete():
            status = run.status if run.exists() else "missing"
            cell["not_available"] = f"run {path.name} is {status}, not complete, in {ctx.store}"
            return
        values.append(run_value(run, metric_of(c, ctx.preset) if c.get("metric") else metric_of(p, ctx.preset)))
        runs.append(path.name)
        devices.add(run.meta.get("device", "?"))
        if cfg.reg == "feddecorr":  # which FedDecorr scaling made the cell (named in the header)
            scalings.add(run.config.reg_options.get("normalization", "paper"))
        cell["data"] = cfg.dataset + (f"-{cfg.dataset_options.get('num_classes')}"
                                      if cfg.dataset_options.get("num_classes") else "")
    cell.update(ours_mean=float(np.mean(values)), ours_std=float(np.std(values)) if len(values) > 1 else None,
                n=len(values), runs=runs, values=values)


class Table:
    metrics = ()  # what each series' ``metrics`` holds (the claims' names)
    @staticmethod
    def compute(entry, ctx: Context) -> dict:

        p = entry.params
        where = f"analyses/specs/{entry.name}.yaml"
        printed = pair(p["cells"], reference(p["reference"]), where)  # each cell's printed number, by key
        rows = list(dict.fromkeys(c["row"] for c in p["cells"]))
        # a printed column label shared by two settings (FedETF Table 6: "FEMNIST" for E = 2 and 5)
        # gets its setting added, so no cell hides another
        per_col = {}
        for c in p["cells"]:
            per_col.setdefault((c["row"], c["column"]), set()).add(c["setting"])
        clash = {col for (_, col), settings in per_col.items() if len(settings) > 1}
        label = [f"{c['column']} ({c['setting']})" if c["column"] in clash else c["column"] for c in p["cells"]]
        cols = list(dict.fromkeys(label))
        cells, devices, scalings = [], set(), set()
        for c, r, col in zip(p["cells"], printed, label):
            opts = c.get(ctx.preset, {})
            cell = {"row": c["row"], "method": c.get("method", c["row"]), "variant": c.get("variant", ""),
                    "column": col, "paper_mean": _num(r.value_mean),
                    "paper_std": _num(r.value_std), "paper_bold": str(r.bold_in_source) == "1",
                    "ours_mean": None, "ours_std": None, "n": 0, "runs": [], "values": [], "not_available": None,
                    "data": None}
            if "not_available" in opts:
                cell["not_available"] = opts["not_available"]
            else:
                _fill(cell, c, p, entry, opts, ctx, devices, scalings)
            cells.append(cell)
        cells += _derived(cells, rows)
        rows = list(dict.fromkeys(c["row"] for c in cells))
        return {"reference": p["reference"], "metric": metric_of(p, ctx.preset), "preset": ctx.preset, "rows": rows,
                "columns": cols, "cells": cells, "devices": sorted(devices), "panels": [],
                "feddecorr_scaling": sorted(scalings)}

    @staticmethod
    def draw(values: dict, entry) -> dict:
        from .table_format import render_all

        return render_all(values, entry, compare=False)


def _derived(cells: list[dict], rows: list[str]) -> list[dict]:
    """The paper's improvement rows (ours computed as the same difference) and a Δ FedDecorr
    row per method that has both."""
    at = {(c["row"], c["column"]): c for c in cells}
    label = {(c["method"], c["variant"]): c["row"] for c in cells}
    out = []

    def diff(name: str, a: str | None, b: str | None) -> None:
        if a is None or b is None:
            return
        for col in dict.fromkeys(c["column"] for c in cells):
            ca, cb = at.get((a, col)), at.get((b, col))
            if ca is None or cb is None:
                continue
            mine = at.get((name, col))
            cell = mine or {"row": name, "method": ca["method"], "variant": "derived", "column": col,
                            "paper_mean": None, "paper_std": None, "paper_bold": False, "runs": [], "values": [],
                            "not_available": None, "data": ca.get("data")}
            if mine is None and ca["paper_mean"] is not None and cb["paper_mean"] is not None:
                cell["paper_mean"] = ca["paper_mean"] - cb["paper_mean"]
            ok = ca["ours_mean"] is not None and cb["ours_mean"] is not None
            cell.update(ours_mean=ca["ours_mean"] - cb["ours_mean"] if ok else None, ours_std=None,
                        n=min(ca.get("n", 0), cb.get("n", 0)) if ok else 0, runs=ca["runs"] + cb["runs"],
                        not_available=None if ok else (ca["not_available"] or cb["not_available"]), derived=f"{a} - {b}")
            if mine is None:
                out.append(cell)

    for (method, variant), row in list(label.items()):
        if variant == "improvement":
            diff(row, label.get((method, "+ETF")), label.get((method, "base")))
        elif method == "improvement":
            diff(row, label.get(("FedETF", "")), label.get(("FedAvg", "")))
        elif variant == "feddecorr":
            diff(f"{method} Δ FedDecorr", row, label.get((method, "")))
    return out


RENDERERS.register("table", kind="table")(Table)
