"""collapse-lab's own entry (lab-methods, docs/beyond.md) renders through the ordinary figures
command: every arm of the spec in the table, fedopt said as no arm of its own, the figure and
the Markdown beside it."""
from __future__ import annotations

import pytest

from tests.fixtures import invoke


@pytest.mark.slow  # 20 smoke runs of digits (one round each) and a render
def test_figures_lab_methods_renders_every_arm_at_the_quick_preset(tmp_path):
    res = invoke("figures", "lab-methods", "--preset", "quick", "--smoke", "--store", tmp_path / "s",
                 "--out", tmp_path / "f", "--workers", "2")
    assert res.exit_code == 0, res.output
    out = tmp_path / "f"
    md = (out / "lab-methods.md").read_text()
    arms = ["fedavgm", "fedprox", "moon", "scaffold", "feddyn", "fednova", "fedadam", "fedyogi", "fedadagrad", "fedbn",
            "fedproto", "fedrs", "fedaws", "fedmmd", "fedetf", "fedavg+feddecorr", "fedavg+decov",
            "fedavg+structured-decov", "fedavg+feduv"]
    rows = [ln.split("|")[1].strip().split(" ")[0] for ln in md.splitlines() if ln.startswith("| ") and "---" not in ln]
    assert sorted(r for r in rows if r not in ("arm", "fedavg")) == sorted(arms), rows
    assert "- fedopt: not an arm (" in md
    assert (out / "lab-methods.png").stat().st_size > 10_000
    assert "one seed: no test" in md  # a smoke render is one seed: described, never judged
