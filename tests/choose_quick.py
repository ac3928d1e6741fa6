"""Choose the edit-run subset (``pytest -m quick``) from measured test times.

    python tests/choose_quick.py [--budget 15]

runs every test that is not marked ``slow``, one at a time in this process (no workers, so
each time is the test's own), and writes ``tests/quick.txt``: the cheapest tests whose
times add up to at most ``--budget`` seconds, cheapest first. The conftest marks those
``quick``. A test not in the file (a new one, or one the machine found slow) is simply not in
the subset: the subset stays under its budget and the full suite still runs it. Measure on an
idle machine; the file records the machine's cores and load beside the list.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUICK_FILE = HERE / "quick.txt"


class Times:
    """Each test's setup + call + teardown time, from pytest's own reports."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self.failed: set[str] = set()

    def pytest_runtest_logreport(self, report):
        self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + report.duration
        if report.failed:
            self.failed.add(report.nodeid)


def choose(seconds: dict[str, float], budget: float) -> list[str]:
    """The cheapest tests, in order of time, while their sum stays within ``budget``."""
    chosen, total = [], 0.0
    for node, t in sorted(seconds.items(), key=lambda kv: (kv[1], kv[0])):
        if total + t > budget:
            break
        chosen.append(node)
        total += t
    return chosen


def main() -> int:
    import pytest

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=15.0,
                    help="seconds the chosen tests may take in all (collection and imports come on top)")
    a = ap.parse_args()
    load = os.getloadavg()
    times = Times()
    os.chdir(HERE.parent)
    pytest.main(["-q", "-m", "not slow", "-p", "no:cacheprovider", "-p", "no:xdist"], plugins=[times])
    passed = {k: v for k, v in times.seconds.items() if k not in times.failed}
    chosen = choose(passed, a.budget)
    head = (f"# pytest -m quick: {len(chosen)} of {len(times.seconds)} not-slow tests, "
            f"{sum(passed[c] for c in chosen):.1f} s of test time measured by tests/choose_quick.py "
            f"({os.cpu_count()} cores, load {load[0]:.2f} before)")
    QUICK_FILE.write_text("\n".join([head, *chosen]) + "\n")
    print(head, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
