"""One label vocabulary, a palette whose series stay apart, panels at paper size."""
from __future__ import annotations

import itertools

import numpy as np

from collapse_lab.labels import alpha_label, describe, label
from collapse_lab.analysis.plots.spectrum import alpha_colors
from collapse_lab.analysis.plots.style import PANEL_W, panels


def test_alpha_reads_the_same_in_legends_titles_and_tables():
    assert label({"alpha": "inf"}) == alpha_label("inf") == "α = ∞"
    assert label({"alpha": "0.05"}) == "α = 0.05"
    assert describe({"partition": "dirichlet", "alpha": "inf", "method": "fedavg", "reg": "none"}) == "α = ∞"
    assert describe({"partition": "dirichlet", "alpha": "0.05", "method": "moon", "reg": "feddecorr"}) == \
        "α = 0.05 moon + feddecorr"


def test_the_four_alphas_get_colours_far_apart():
    """The default spectrum's four alphas: every pair at least 0.25 apart in RGB (the
    sequential map gave 0.25 and inf nearly the same green)."""
    cols = alpha_colors(["0.01", "0.05", "0.25", "inf"])
    assert list(cols) == ["0.01", "0.05", "0.25", "inf"]
    dists = [np.linalg.norm(np.subtract(cols[a], cols[b])) for a, b in itertools.combinations(cols, 2)]
    assert min(dists) > 0.25


def test_many_runs_wrap_into_paper_sized_rows():
    fig, axes = panels(5)
    w, h = fig.get_size_inches()
    assert len(axes) == 5 and np.isclose(w, 2 * PANEL_W) and h > w  # 3 rows of 2, not a 5-panel strip
    assert sum(ax.get_visible() for ax in fig.axes) == 5
