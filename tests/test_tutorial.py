"""docs/tutorial.py runs as a user runs it, and prints what the analysis computes."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

TUTORIAL = Path(__file__).resolve().parents[1] / "docs" / "tutorial.py"


@pytest.mark.slow
def test_the_tutorial_runs_and_reports_its_numbers(tmp_path):
    env = {**os.environ, "TUTORIAL_STORE": str(tmp_path)}
    res = subprocess.run([sys.executable, str(TUTORIAL)], env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    rows = re.findall(r"alpha=\s*(\S+): n>tau\s+(\d+)\s+effective rank ([\d.]+)", res.stdout)
    assert sorted(a for a, _, _ in rows) == ["0.05", "inf"]
    assert all(0 < int(n) <= 128 and float(e) > 1 for _, n, e in rows)
    assert (tmp_path / "tutorial_spectrum.png").stat().st_size > 10_000
