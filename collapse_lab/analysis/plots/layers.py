"""Where in the network collapse starts (issue 50): a layer x round heatmap of one measure
(``collapse-lab layers``, its report section, and the image TensorBoard and W&B show each
round under ``train --probe-layers``), and the spectra of chosen layers at chosen rounds in
the style of FedDecorr Fig. 2 (top-k singular values on a log10 axis, tau dotted)."""
from __future__ import annotations

import numpy as np

from .spectrum import Curve, plot_spectrum
from .style import grid, palette


def heatmap_figure(rows: list[dict], measure: str, title: str):
    """Layers (input side at the top) x rounds, one panel per (model, run): rows of panels
    are the models (global, the client), columns the runs. ``rows``: dicts with run, model,
    round, layer and ``measure``."""
    runs = list(dict.fromkeys(e["run"] for e in rows))
    models = list(dict.fromkeys(e["model"] for e in rows))
    fig, axes = grid(len(models), len(runs))
    for i, model in enumerate(models):
        for j, run in enumerate(runs):
            _heat_panel(axes[i][j], [e for e in rows if e["run"] == run and e["model"] == model], measure,
                        f"{run[:36]}\n{model}")
    fig.suptitle(title, fontsize=8)
    return fig


def _heat_panel(ax, mine: list[dict], measure: str, title: str) -> None:
    ax.grid(False)
    if not mine:
        ax.set_axis_off()
        return
    layers = list(dict.fromkeys(e["layer"] for e in mine))
    rounds = sorted({e["round"] for e in mine})
    m = np.full((len(layers), len(rounds)), np.nan)
    for e in mine:
        m[layers.index(e["layer"]), rounds.index(e["round"])] = e[measure]
    im = ax.imshow(m, aspect="auto", cmap="viridis", interpolation="nearest")
    step = max(1, len(rounds) // 12)  # at most a dozen round labels
    ax.set_xticks(range(0, len(rounds), step), [str(r) for r in rounds[::step]], fontsize=6)
    ax.set_yticks(range(len(layers)), layers, fontsize=6)
    ax.set_xlabel("round")
    ax.set_title(title, fontsize=7)
    ax.figure.colorbar(im, ax=ax, label=measure.replace("_", " "))


def layer_spectra_figure(spectra: list[dict], tau: float, title: str, top: int = 100):
    """One panel per (run, model, round): the spectrum of each chosen layer, one colour per
    layer (input side first). ``spectra``: dicts with run, model, round, layer, ``sv``
    (descending) and ``floor``."""
    keys = list(dict.fromkeys((e["run"], e["model"], e["round"]) for e in spectra))
    layers = list(dict.fromkeys(e["layer"] for e in spectra))
    colors = dict(zip(layers, palette(len(layers))))
    cols = min(len(keys), 4)
    fig, axes = grid((len(keys) + cols - 1) // cols, cols)
    flat = [ax for row in axes for ax in row]
    for ax, (run, model, r) in zip(flat, keys):
        curves = [Curve(e["layer"], sv=e["sv"], floor=e["floor"], color=colors[e["layer"]]) for e in spectra
                  if (e["run"], e["model"], e["round"]) == (run, model, r)]
        plot_spectrum(ax, curves, top=top, tau=tau, title=f"{run[:36]}\n{model}, round {r}")
    for ax in flat[len(keys):]:
        ax.set_axis_off()
    fig.suptitle(title, fontsize=8)
    return fig
