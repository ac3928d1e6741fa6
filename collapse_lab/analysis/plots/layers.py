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




def _ratio_panel(ax, g: str, reference: dict, cells: dict, model: str, width: dict):
    """The last column of group ``g``: the global model's log2 ratio to its IID run's, with
    each layer's onset outlined; blank (or naming itself the reference) without a twin."""
    from matplotlib.colors import TwoSlopeNorm

    from ..onset import onsets

    if g not in reference:
        ax.set_axis_off()
        if g in reference.values():
            ax.text(0.5, 0.5, "the IID reference\nof the ratios", ha="center", va="center", fontsize=8,
                    transform=ax.transAxes)
        return None
    mine, ref = _mean_cells(cells, g, model), _mean_cells(cells, reference[g], model)
    ratio = {k: float(np.log2(v / ref[k])) for k, v in mine.items() if k in ref and v > 0 and ref[k] > 0}
    lim = max([abs(v) for v in ratio.values()] + [1e-3])
    return _heat_panel(ax, ratio, TwoSlopeNorm(0.0, -lim, lim), f"{g}: {model} / IID (log2)", width,
                       cmap="RdBu", fmt="{:+.2f}", onset=onsets(ratio))


def heatmap_figure(rows: list[dict], measure: str, title: str, reference: dict | None = None):
    """Layers (input side at the top) x rounds, one row of panels per group (or run), one
    column per model (global, the client); with ``reference`` (group -> its IID group, the
    same settings at alpha inf) a last column shows the global model's log2 ratio to the IID
    run's, round by round, with each layer's onset outlined (``analysis.onset``: the first
    round from which it stays below half the IID run's value). Each cell holds its value where
    the cell is wide enough for 7-pt text at the figure's size (7 in wide at most). ``rows``:
    dicts with run, model, round, layer, ``measure``, optionally group and width."""
    from matplotlib.colors import LogNorm

    groups = list(dict.fromkeys(_group(e) for e in rows))
    models = list(dict.fromkeys(e["model"] for e in rows))
    cells: dict[tuple, list[float]] = defaultdict(list)
    width: dict[str, int] = {}
    for e in rows:
        cells[(_group(e), e["model"], e["layer"], e["round"])].append(e[measure])
        width.setdefault(e["layer"], e.get("width"))
    values = [v for vs in cells.values() for v in vs if v > 0]
    norm = LogNorm(vmin=min(values), vmax=max(values)) if values else None
    reference = {g: r for g, r in (reference or {}).items() if g in groups and r in groups and g != r}
    cols = len(models) + (1 if reference else 0)
    n_layers = len({e["layer"] for e in rows})
    n_rounds = len({e["round"] for e in rows})
    fig, axes = _heat_grid(len(groups), cols, n_layers, n_rounds)
    im = rim = None
    for i, g in enumerate(groups):
        for j, model in enumerate(models):
            mine = _mean_cells(cells, g, model)
            n = sorted({len(vs) for k, vs in cells.items() if k[:2] == (g, model)}) or [1]
            runs = f" ({n[0]}{'' if len(n) == 1 else f'-{n[-1]}'} seeds)" if n[-1] > 1 else ""
            im = _heat_panel(axes[i][j], mine, norm, f"{g}: {model}{runs}", width) or im
        if reference:
            rim = _ratio_panel(axes[i][-1], g, reference, cells, models[0], width) or rim
    if im is not None:
        cb = fig.colorbar(im, ax=[row[k] for row in axes for k in range(len(models))], label=measure.replace("_", " "),
                          shrink=0.6, location="bottom")  # below the panels: the page's width is the panels'
        _plain_ticks(cb)
    if rim is not None:
        rcb = fig.colorbar(rim, ax=[row[-1] for row in axes], label="log2 ratio to IID", shrink=0.9, location="bottom")
        rcb.ax.tick_params(labelsize=7)
    fig.suptitle(title + ("\n(outlined: each layer's onset, the first round from which it stays below half the "
                          "IID run's)" if reference else "\n(no IID run of these settings: no onset is marked)"),
                 fontsize=9)
    return fig


def _heat_grid(rows: int, cols: int, n_layers: int, n_rounds: int):
    """Panels sized by their cells (about 0.3 in a cell, at least a column's third), labels
    at 8 pt: a figure a page's width holds."""
    from .style import plt, use

    use()
    w = min((7.0 - 0.4) / cols, max(2.2, 0.32 * n_rounds + 1.4))  # the whole figure 7 in wide at most: print size
    h = max(1.6, 0.26 * n_layers + 0.9)
    fig, axes = plt.subplots(rows, cols, figsize=(w * cols + 0.4, h * rows + 1.4), squeeze=False,
                             layout="constrained")
    fig.panel_width_in = w
    return fig, [list(r) for r in axes]


def _mean_cells(cells: dict, g: str, model: str) -> dict:
    return {k[2:]: float(np.mean(vs)) for k, vs in cells.items() if k[:2] == (g, model)}


def _plain_ticks(cb) -> None:
    """A log colour bar with plain numbers at its ends and between (not 6x10^0)."""
    from matplotlib.ticker import FixedLocator, ScalarFormatter

    lo, hi = cb.mappable.norm.vmin, cb.mappable.norm.vmax
    ticks = np.unique(np.round(np.geomspace(lo, hi, 5), 2 if hi < 10 else 1))
    axis = cb.ax.xaxis if cb.orientation == "horizontal" else cb.ax.yaxis
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_minor_locator(FixedLocator([]))
    fmt = ScalarFormatter()
    fmt.set_scientific(False)
    axis.set_major_formatter(fmt)
    cb.ax.tick_params(labelsize=8)


def _heat_panel(ax, mine: dict, norm, title: str, width: dict | None = None, onset: dict | None = None,
                cmap: str = "viridis", fmt: str = "{:.3g}"):
    from matplotlib.patches import Rectangle

    ax.grid(False)
    if not mine:
        ax.set_axis_off()
        return None
    layers = list(dict.fromkeys(layer for layer, _ in mine))
    rounds = sorted({r for _, r in mine})
    m = np.full((len(layers), len(rounds)), np.nan)
    for (layer, r), v in mine.items():
        m[layers.index(layer), rounds.index(r)] = v
    im = ax.imshow(m, aspect="auto", cmap=cmap, interpolation="nearest", norm=norm)
    step = max(1, len(rounds) // 12)  # at most a dozen round labels
    ax.set_xticks(range(0, len(rounds), step), [str(r) for r in rounds[::step]], fontsize=8)
    names = [f"{name} ({width[name]})" if width and width.get(name) else name for name in layers]
    ax.set_yticks(range(len(layers)), names, fontsize=8)
    ax.set_xlabel("round (0: the initial model)" if rounds[0] == 0 else "round", fontsize=8)
    ax.set_title(title, fontsize=9)
    cell = (getattr(ax.figure, "panel_width_in", 2.0) - 1.1) / len(rounds)  # a cell's width, the labels' margin off
    if len(layers) <= 14 and cell >= 0.36:  # 7-pt values only where a cell holds them
        for (y, x), v in np.ndenumerate(m):
            if np.isfinite(v):
                shade = norm(v) if norm is not None else 0.5
                ax.text(x, y, fmt.format(v), ha="center", va="center", fontsize=7,
                        color="black" if 0.35 < float(shade) < 0.85 or (cmap == "viridis" and shade >= 0.85) else "white")
    for layer, r in (onset or {}).items():
        if layer in layers and r in rounds:
            ax.add_patch(Rectangle((rounds.index(r) - 0.5, layers.index(layer) - 0.5), 1, 1, fill=False,
                                   edgecolor="#d62728", linewidth=1.6))
    return im


def layer_spectra_figure(spectra: list[dict], tau: float, title: str, top: int = 100):
    """One row of panels per (group, model), one column per round drawn, all on one log10
    axis (shared): the spectrum of each chosen layer, one colour per layer (input side first),
    the mean over the group's seeds with a +-1 std band. ``spectra``: dicts with run, model,
    round, layer, ``sv`` (descending), ``floor`` and optionally group."""
    rows_ = list(dict.fromkeys((_group(e), e["model"]) for e in spectra))
    rounds = sorted({e.get("column", e["round"]) for e in spectra})  # a client's first round stands in for 0
    layers = list(dict.fromkeys(e["layer"] for e in spectra))
    colors = dict(zip(layers, palette(len(layers))))
    fig, axes = grid(len(rows_), len(rounds), scale=1.0, sharey=True)
    for i, (g, model) in enumerate(rows_):
        for j, r in enumerate(rounds):
            ax, curves = axes[i][j], []
            here = [e for e in spectra if (_group(e), e["model"], e.get("column", e["round"])) == (g, model, r)]
            for layer in layers:
                logs = [log10_safe(e["sv"][:top], e["floor"]).numpy() for e in here if e["layer"] == layer]
                if logs:
                    n = min(len(v) for v in logs)
                    stack = np.stack([v[:n] for v in logs])
                    curves.append(Curve(layer, mean=stack.mean(0), std=stack.std(0) if len(logs) > 1 else None,
                                        color=colors[layer]))
            if not curves:  # a client model has no round 0
                ax.text(0.5, 0.5, f"no {model} model\nat round {r}", ha="center", va="center", fontsize=8,
                        transform=ax.transAxes)
                ax.set_xticks([])
                continue
            shown = sorted({e["round"] for e in here})  # the client's first round where the column is round 0
            plot_spectrum(ax, curves, top=top, tau=tau, title=f"{g}: {model}, round {', '.join(map(str, shown))}")
            if (i, j) != (0, 0) and ax.get_legend() is not None:
                ax.get_legend().remove()  # one legend: the layers are the same in every panel
    fig.suptitle(title, fontsize=9)
    return fig
