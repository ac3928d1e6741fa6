"""The analyses' text tables (``analysis.text``) on hand-made rows: each value in its column
at the printed precision, a missing value left blank, and the store table's widths set by
its longest cell."""
from __future__ import annotations

from collapse_lab.analysis.text import compare_lines, runs_lines, spectrum_lines, units_lines


def test_the_spectrum_table_puts_each_number_in_its_column():
    row = {"run": "r", "model": "global", "alpha": "0.05", "round": 3, "n_significant": 12, "effective_rank": 7.12345,
           "dead_units": 2, "rankme": 9.5, "stable_rank": 1.25}
    head, line = spectrum_lines([row], "spectra")
    assert head.split() == ["run", "model", "alpha", "round", "n>tau", "eff.rank", "dead", "RankMe", "st.rank"]
    assert line == "r".ljust(48) + " " + "global".ljust(9) + "   0.05     3     12     7.123     2    9.500    1.250"
    # a row that has no dead units or RankMe (a foreign store): a dash and nan, never a crash
    bare = spectrum_lines([{**row, "dead_units": "-"} | {"rankme": float("nan")}], "spectra")[1]
    assert bare.split()[-4:] == ["7.123", "-", "nan", "1.250"]


def test_rounds_without_a_local_model_leave_r_blank():
    rows = [{"run": "a", "round": 1, "n_significant_global": 5, "n_significant_local": 4, "R": -0.12345},
            {"run": "a", "round": 2, "n_significant_global": 6}]
    _, with_r, without = spectrum_lines(rows, "rounds")
    assert with_r.split() == ["a", "1", "5", "4", "-0.1235"]
    assert without.split() == ["a", "2", "6"] and len(without) == len(with_r)


def test_compare_names_r_and_k():
    line, = compare_lines([{"run": "x", "round": 2, "client": 0, "R": 0.5, "K": 100, "R_is": "R_top"}])
    assert line == "x: round 2, client 0: R = 0.5000 over K = 100 (R_top; the figures' R is R_top over the top 100)"


def test_the_store_table_is_as_wide_as_its_longest_cell():
    from collapse_lab.analysis.run_rows import COLUMNS

    row = {**{c: "" for c in COLUMNS}, "acc": None}
    rows = [{**row, "run": "a-very-long-run-name", "size": 2_500_000}, {**row, "run": "b", "acc": 0.5, "size": 500_000}]
    lines = runs_lines(rows)
    assert lines[0].startswith("run" + " " * (len("a-very-long-run-name") - 3) + "  ")
    assert lines[2].startswith("b" + " " * (len("a-very-long-run-name") - 1) + "  ") and "0.5000" in lines[2]
    assert lines[-1] == "2 run(s), 3.0 MB"


def test_units_marks_the_start_and_each_epoch():
    epoch = {"epoch": 1, "ce": 2.0, "beta_reg": 0.01, "dead": 3, "died": 1, "z_unit_grad_ce": 0.5,
             "z_unit_grad_reg": 0.25, "dying_unit_grad_ce": None, "dying_unit_grad_reg": 0.125,
             "layers": {"fc": {"grad_ce": 1.0, "grad_reg": 0.5}}}
    out = {"run": "u", "round": 1, "client": 0, "images": 10, "reg": "feddecorr", "beta": 0.1, "reg_options": {},
           "units": 8, "with": [{"epoch": 0, "dead": 2}, epoch], "without": [{"epoch": 0, "dead": 2}]}
    lines = units_lines(out)
    assert lines[0] == "u: round 1, client 0 (10 images), feddecorr beta 0.1 {}; 8 units"
    assert lines[1] == "with the regularizer:" and lines[3].split() == ["0", "2"]
    assert lines[4].split() == ["1", "2.0000", "0.01", "3", "1", "0.5", "0.25", "-", "0.125", "fc", "1/0.5"]
    assert lines[5] == "without the regularizer:" and len(lines) == 8
