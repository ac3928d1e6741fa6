"""Two commands sharing runs (issue 58's held-out case): a run another collapse-lab process
trains is waited for and then read, never failed on its lock; both commands end with their
figure."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.fixtures import invoke


@pytest.mark.slow
def test_two_figures_commands_sharing_runs_both_render(tmp_path):
    store = tmp_path / "s"
    other = subprocess.Popen([sys.executable, "-m", "collapse_lab.entry", "figures", "feddecorr-fig1", "--smoke",
                              "--store", str(store), "--out", str(tmp_path / "f1")], stderr=subprocess.PIPE, text=True)
    lines = []
    try:
        for line in other.stderr:  # until the other command starts training its runs
            lines.append(line)
            if "training" in line:
                break
        res = invoke("figures", "feddecorr-fig1", "--smoke", "--store", store, "--out", tmp_path / "f2")
        lines += other.stderr.readlines()
    finally:
        code = other.wait(timeout=600)
    assert code == 0, "".join(lines)
    assert res.exit_code == 0, res.output
    assert "is being written by another" not in res.output + "".join(lines)
    assert (tmp_path / "f1" / "feddecorr-fig1.png").is_file() and (tmp_path / "f2" / "feddecorr-fig1.png").is_file()
