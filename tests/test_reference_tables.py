"""The papers' printed table cells, kept once in the project (analyses/reference/
all_tables_long.csv, one row per cell): 30 tables and 1,103 cells, every number parses, and the
file equals the team's checked source, whose per-table files are each exactly their table's
rows of it, where that source is present."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

REF = Path(__file__).resolve().parents[1] / "analyses" / "reference"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "reference"


def rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_the_long_file_holds_every_table_once():
    long = rows(REF / "all_tables_long.csv")
    assert len(long) == 1103 and len({r["table"] for r in long}) == 30
    assert list(REF.glob("*.csv")) == [REF / "all_tables_long.csv"]  # the numbers are stored once


@pytest.mark.skipif(not SHARED.is_dir(), reason="the team's checked source (../shared/reference) is absent")
def test_each_source_table_file_is_its_slice_of_the_long_file():
    by_table: dict[str, list[dict]] = {}
    for r in rows(REF / "all_tables_long.csv"):
        by_table.setdefault(r["table"], []).append(r)
    files = sorted(SHARED.glob("*_table[0-9]*.csv"))
    assert len(files) == 30
    for p in files:
        name = p.stem.replace("_table", "-table").replace("_", "-")
        assert rows(p) == by_table[name], p.name


def test_every_cell_value_is_a_number_or_empty():
    for r in rows(REF / "all_tables_long.csv"):
        for key in ("value_mean", "value_std"):
            if r[key] != "":
                float(r[key])
        assert r["is_col_best"] in ("0", "1", "")  # bold_in_source also records where the markup was lost


@pytest.mark.skipif(not SHARED.is_dir(), reason="the team's checked source (../shared/reference) is absent")
def test_the_copy_equals_the_checked_source():
    assert (REF / "all_tables_long.csv").read_bytes() == (SHARED / "all_tables_long.csv").read_bytes()
