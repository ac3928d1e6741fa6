"""Specs that state each run once name the same runs (issue 37): every catalogue entry's run
names at every preset equal the ones the specs resolved to when each table stated its runs
twice (``runs.<preset>.grid`` and ``params.cells``), kept in tests/vectors/catalogue_runs/
(written by collapse-lab at commit 5b093fa, the last with the old specs)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from collapse_lab.plan import entry_runs
from collapse_lab.analysis.catalogue import catalogue
from collapse_lab.errors import CollapseLabError

VECTOR = Path(__file__).resolve().parents[1] / "vectors" / "catalogue_runs" / "names.json"


@pytest.mark.precision("fp32")  # compares with fp32 numbers, run names or round-off
@pytest.mark.slow  # resolves every run of the catalogue at three presets (about 2,000)
def test_every_entry_names_the_runs_it_named_before(monkeypatch, tmp_path):
    monkeypatch.delenv("COLLAPSE_LAB_DATA", raising=False)  # as the vector was written: no data here
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    want = json.loads(VECTOR.read_text())
    got = {}
    for e in catalogue():
        for p in ("quick", "cpu", "paper"):
            if p in e.runs:
                try:
                    got[f"{e.name} {p}"] = sorted(c.run_name() for c in entry_runs(e, p))
                except CollapseLabError as err:
                    got[f"{e.name} {p}"] = f"error: {err}"
    want = {k: sorted(v) if isinstance(v, list) else v for k, v in want.items()}
    # every entry of then names the same runs; an entry added since is collapse-lab's own (lab-*)
    assert set(want) <= set(got), set(want) - set(got)
    assert all(k.startswith("lab-") for k in set(got) - set(want)), set(got) - set(want)
    for k in want:
        assert got[k] == want[k], k


def test_a_table_cell_is_its_row_and_column_and_pairs_with_its_printed_number_by_key():
    """Hand example of the rows x columns form: the options merge base < row < column < cell,
    a cell's own not_available replaces them, the runs are each cell once, and the printed
    numbers pair by (method, regularizer, column, setting) whatever their order."""
    import pandas as pd

    from collapse_lab.analysis.table_spec import expand, pair, with_derived

    params = {"base": {"quick": {"model": "mlp"}},
              "rows": {"A": {"method": "FedAvg", "variant": "", "ref": ["FedAvg", "none"], "quick": {"method": "fedavg"}},
                       "B": {"method": "FedAvg", "variant": "feddecorr", "ref": ["FedAvg", "feddecorr"],
                             "quick": {"method": "fedavg", "reg": "feddecorr"}}},
              "columns": {"c/0.1": {"quick": {"alpha": "0.1"}}, "c/inf": {"quick": {"alpha": "inf", "model": "cnn"}}},
              "cells": [["A", "c/0.1", "alpha=0.1"], ["A", "c/inf", "alpha=inf"], ["B", "c/0.1", "alpha=0.1"],
                        ["B", "c/inf", "alpha=inf", {"quick": {"not_available": "no such run"}}]]}
    cells, combos = expand(params, ["quick"], "t")
    assert [c["quick"] for c in cells] == [{"model": "mlp", "method": "fedavg", "alpha": "0.1"},
                                          {"model": "cnn", "method": "fedavg", "alpha": "inf"},
                                          {"model": "mlp", "method": "fedavg", "reg": "feddecorr", "alpha": "0.1"},
                                          {"not_available": "no such run"}]
    assert combos["quick"] == [c["quick"] for c in cells[:3]]
    runs, derived = with_derived({"quick": {"seeds": [0]}}, params, "t")
    assert runs["quick"]["grid"]["combo"] == combos["quick"] and derived["cells"] == cells
    ref = pd.DataFrame([dict(method=m, regularizer=r, column=c, setting=s, value_mean=v) for m, r, c, s, v in (
        ("FedAvg", "feddecorr", "c/inf", "alpha=inf", 4.0), ("FedAvg", "none", "c/0.1", "alpha=0.1", 1.0),
        ("FedAvg", "feddecorr", "c/0.1", "alpha=0.1", 3.0), ("FedAvg", "none", "c/inf", "alpha=inf", 2.0))])
    assert [r.value_mean for r in pair(cells, ref, "t")] == [1.0, 2.0, 3.0, 4.0]
    with pytest.raises(CollapseLabError, match="1 printed cell"):
        pair(cells[:3], ref, "t")
    with pytest.raises(CollapseLabError, match="has no printed value"):
        pair(cells, ref.iloc[:3], "t")
    with pytest.raises(CollapseLabError, match="has a grid"):
        with_derived({"quick": {"grid": {"alpha": [1]}}}, params, "t")
