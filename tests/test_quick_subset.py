"""The edit-run subset: chosen cheapest-first within its budget, and never a slow test."""
from __future__ import annotations

import re


from tests.choose_quick import QUICK_FILE, choose


def test_the_cheapest_tests_are_chosen_within_the_budget():
    t = {"a": 1.0, "b": 0.5, "c": 3.0, "d": 0.5}
    assert choose(t, 2.0) == ["b", "d", "a"]  # 0.5 + 0.5 + 1.0 = 2.0; c would pass the budget
    assert choose(t, 0.4) == []


def test_the_committed_list_says_how_many_and_how_long(request):
    lines = QUICK_FILE.read_text().splitlines()
    m = re.match(r"# pytest -m quick: (\d+) of (\d+) not-slow tests, ([\d.]+) s", lines[0])
    assert m and int(m[1]) == len(lines) - 1 and float(m[3]) <= 60


class Item:
    def __init__(self, nodeid, slow):
        self.nodeid, self.marks = nodeid, ({"slow"} if slow else set())

    def get_closest_marker(self, name):
        return name if name in self.marks else None

    def add_marker(self, mark):
        self.marks.add(mark.name)


def test_the_listed_tests_are_quick_and_a_slow_one_never(tmp_path, monkeypatch):
    from tests import conftest

    f = tmp_path / "quick.txt"
    f.write_text("# header\ntests/a.py::t1\ntests/a.py::t2\n")
    monkeypatch.setattr(conftest, "QUICK", f)
    items = [Item("tests/a.py::t1", False), Item("tests/a.py::t2", True), Item("tests/a.py::t3", False)]
    conftest.pytest_collection_modifyitems(None, items)
    assert ["quick" in i.marks for i in items] == [True, False, False]
