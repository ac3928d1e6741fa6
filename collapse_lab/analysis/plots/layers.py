"""Where in the network collapse starts (issue 50): a layer x round heatmap of one measure
(``collapse-lab layers``, its report section, and the image TensorBoard and W&B show each
round under ``train --probe-layers``), and the spectra of chosen layers at chosen rounds in
the style of FedDecorr Fig. 2 (top-k singular values on a log10 axis, tau dotted).

Rows may carry a ``group`` (a configuration: its runs differ only in the seed); a panel
then shows the mean over the group's seeds (the spectra: the mean and +-1 std of the log10
values). One colour scale (logarithmic) serves every panel of a heatmap, so panels compare."""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from ...spectra.functional import log10_safe
from .spectrum import Curve, plot_spectrum
from .style import grid, palette


def _group(e: dict) -> str:
    return e.get("group") or e["run"]


def heatmap_figure(rows: list[dict], measure: str, title: str):
    """Layers (input side at the top) x rounds, one panel per (model, group): rows of panels
    are the models (global, the client), columns the groups (or runs). ``rows``: dicts with
    run, model, round, layer, ``measure`` and optionally group."""
    from matplotlib.colors import LogNorm

    groups = list(dict.fromkeys(_group(e) for e in rows))
    models = list(dict.fromkeys(e["model"] for e in rows))
    cells: dict[tuple, list[float]] = defaultdict(list)
    for e in rows:
        cells[(_group(e), e["model"], e["layer"], e["round"])].append(e[measure])
    values = [v for vs in cells.values() for v in vs if v > 0]
    norm = LogNorm(vmin=min(values), vmax=max(values)) if values else None
    fig, axes = grid(len(models), len(groups))
    im = None
    for i, model in enumerate(models):
        for j, g in enumerate(groups):
            mine = {k[2:]: vs for k, vs in cells.items() if k[:2] == (g, model)}
            n = sorted({len(vs) for vs in mine.values()}) or [1]
            runs = f" (mean of {n[0]}{'' if len(n) == 1 else f'-{n[-1]}'} runs)" if n[-1] > 1 else ""
            im = _heat_panel(axes[i][j], mine, norm, f"{g}\n{model}{runs}") or im
    if im is not None:
        fig.colorbar(im, ax=[ax for row in axes for ax in row], label=measure.replace("_", " "), shrink=0.8)
    fig.suptitle(title, fontsize=8)
    return fig


def _heat_panel(ax, mine: dict, norm, title: str):
    ax.grid(False)
    if not mine:
        ax.set_axis_off()
        return None
    layers = list(dict.fromkeys(layer for layer, _ in mine))
    rounds = sorted({r for _, r in mine})
    m = np.full((len(layers), len(rounds)), np.nan)
    for (layer, r), vs in mine.items():
        m[layers.index(layer), rounds.index(r)] = float(np.mean(vs))
    im = ax.imshow(m, aspect="auto", cmap="viridis", interpolation="nearest", norm=norm)
    step = max(1, len(rounds) // 12)  # at most a dozen round labels
    ax.set_xticks(range(0, len(rounds), step), [str(r) for r in rounds[::step]], fontsize=6)
    ax.set_yticks(range(len(layers)), layers, fontsize=6)
    ax.set_xlabel("round")
    ax.set_title(title, fontsize=7)
    return im


def layer_spectra_figure(spectra: list[dict], tau: float, title: str, top: int = 100):
    """One panel per (group, model, round): the spectrum of each chosen layer, one colour
    per layer (input side first), the mean over the group's seeds with a +-1 std band.
    ``spectra``: dicts with run, model, round, layer, ``sv`` (descending), ``floor`` and
    optionally group."""
    keys = list(dict.fromkeys((_group(e), e["model"], e["round"]) for e in spectra))
    layers = list(dict.fromkeys(e["layer"] for e in spectra))
    colors = dict(zip(layers, palette(len(layers))))
    cols = min(len(keys), 4)
    fig, axes = grid((len(keys) + cols - 1) // cols, cols)
    flat = [ax for row in axes for ax in row]
    for ax, key in zip(flat, keys):
        curves = []
        for layer in layers:
            logs = [log10_safe(e["sv"][:top], e["floor"]).numpy() for e in spectra
                    if (_group(e), e["model"], e["round"]) == key and e["layer"] == layer]
            if logs:
                n = min(len(v) for v in logs)
                stack = np.stack([v[:n] for v in logs])
                curves.append(Curve(layer, mean=stack.mean(0), std=stack.std(0) if len(logs) > 1 else None,
                                    color=colors[layer]))
        g, model, r = key
        plot_spectrum(ax, curves, top=top, tau=tau, title=f"{g}\n{model}, round {r}")
    for ax in flat[len(keys):]:
        ax.set_axis_off()
    fig.suptitle(title, fontsize=8)
    return fig
