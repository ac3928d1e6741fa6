"""The layers heatmap shows where collapse starts: each cell's value, the log2 ratio to the IID
run beside, and there each layer's onset (the first round from which it stays below half the
IID run's) outlined."""
from __future__ import annotations

import math

from matplotlib.patches import Rectangle

from collapse_lab.analysis.plots.layers import heatmap_figure, layer_spectra_figure


def _rows(group: str, values: dict) -> list[dict]:
    return [{"run": group, "group": group, "model": "global", "round": r, "layer": layer, "width": 8,
             "effective_rank": v} for layer, vs in values.items() for r, v in enumerate(vs)]


def test_onset_values_and_the_ratio_to_iid_by_hand():
    # by hand, log2(skew / iid): conv 0, -0.42, -1.42, -1.42 (below -1 from round 2); z 0, -1.58, -1.42, -2 (from 1)
    skew = {"conv": [8.0, 6.0, 3.0, 3.0], "z": [8.0, 2.0, 1.5, 1.0]}
    iid = {"conv": [8.0, 8.0, 8.0, 8.0], "z": [8.0, 6.0, 4.0, 4.0]}
    fig = heatmap_figure(_rows("skew", skew) + _rows("iid", iid), "effective_rank", "t", reference={"skew": "iid"})
    axes = fig.axes
    heat, ratio = axes[0], axes[1]  # row "skew": its heatmap, then its ratio to IID
    boxes = lambda ax: sorted((round(p.get_x() + 0.5), round(p.get_y() + 0.5)) for p in ax.patches  # noqa: E731
                              if isinstance(p, Rectangle) and not p.get_fill())
    assert boxes(ratio) == [(1, 1), (2, 0)] and boxes(heat) == []  # (round, layer row): z at 1, conv at 2
    cells = {(round(t.get_position()[0]), round(t.get_position()[1])): t.get_text() for t in heat.texts}
    assert cells[(3, 1)] == "1" and cells[(2, 0)] == "3"
    assert all(t.get_fontsize() >= 7 for t in heat.texts + ratio.texts)  # legible at a 7-in print width
    assert fig.get_figwidth() <= 7.0
    want = {(r, y): f"{math.log2(skew[layer][r] / iid[layer][r]):+.2f}" for y, layer in enumerate(skew) for r in range(4)}
    got = {(round(t.get_position()[0]), round(t.get_position()[1])): t.get_text() for t in ratio.texts}
    assert got == want
    assert [t.get_text() for t in heat.get_yticklabels()] == ["conv (8)", "z (8)"]
    assert all(t.get_fontsize() >= 8 for t in heat.get_yticklabels() + heat.get_xticklabels())


def test_the_spectra_grid_has_no_empty_slot_and_one_axis():
    import torch

    spectra = [{"run": "a", "group": "a", "model": m, "round": r, "layer": layer, "sv": torch.tensor([1.0, 0.1, 0.01]),
                "floor": 1e-12} for m in ("global", "client_0") for r in (0, 5) for layer in ("conv", "z")
               if not (m == "client_0" and r == 0)]
    fig = layer_spectra_figure(spectra, 1e-2, "t")
    axes = fig.axes
    assert len(axes) == 4  # (global, client) x (round 0, round 5)
    assert len({ax.get_ylim() for ax in axes}) == 1  # one shared log10 axis
    assert "no client_0 model\nat round 0" in [t.get_text() for t in axes[2].texts]
