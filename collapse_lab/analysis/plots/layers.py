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


ONSET = 0.5  # a layer's onset: the first round its measure is at most this share of its initial value


def heatmap_figure(rows: list[dict], measure: str, title: str, reference: dict | None = None):
    """Layers (input side at the top) x rounds, one row of panels per group (or run), one
    column per model (global, the client); with ``reference`` (group -> its IID group, the
    same settings at alpha inf) a last column shows the global model's log2 ratio to the IID
    run's, round by round. Each cell holds its value where the panel is small enough to read;
    a layer's onset (the first round at which its measure is at most ``ONSET`` of its first
    round's, the initial model where round 0 is drawn) is outlined. ``rows``: dicts with run,
    model, round, layer, ``measure``, optionally group and width."""
    from matplotlib.colors import LogNorm, TwoSlopeNorm

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
            im = _heat_panel(axes[i][j], mine, norm, f"{g}: {model}{runs}", width, onset=True) or im
        if reference:
            ax = axes[i][-1]
            if g not in reference:
                ax.set_axis_off()
                if g in reference.values():
                    ax.text(0.5, 0.5, "the IID reference\nof the ratios", ha="center", va="center", fontsize=8,
                            transform=ax.transAxes)
                continue
            mine, ref = _mean_cells(cells, g, models[0]), _mean_cells(cells, reference[g], models[0])
            ratio = {k: float(np.log2(v / ref[k])) for k, v in mine.items() if k in ref and v > 0 and ref[k] > 0}
            lim = max([abs(v) for v in ratio.values()] + [1e-3])
            rim = _heat_panel(ax, ratio, TwoSlopeNorm(0.0, -lim, lim), f"{g}: {models[0]} / IID (log2)", width,
                              cmap="RdBu", fmt="{:+.2f}") or rim
    if im is not None:
        cb = fig.colorbar(im, ax=[row[k] for row in axes for k in range(len(models))], label=measure.replace("_", " "),
                          shrink=0.8)
        _plain_ticks(cb)
    if rim is not None:
        fig.colorbar(rim, ax=[row[-1] for row in axes], label="log2 ratio to the IID run", shrink=0.8)
    fig.suptitle(title + f"\n(outlined: a layer's onset, the first round at {ONSET:.0%} or less of its first "
                 "round's value)", fontsize=9)
    return fig


def _heat_grid(rows: int, cols: int, n_layers: int, n_rounds: int):
    """Panels sized by their cells (about 0.3 in a cell, at least a column's third), labels
    at 8 pt: a figure a page's width holds."""
    from .style import plt, use

    use()
    w = min(7.0, max(2.2, 0.32 * n_rounds + 1.4))
    h = max(1.6, 0.26 * n_layers + 0.9)
    fig, axes = plt.subplots(rows, cols, figsize=(w * cols + 1.2, h * rows + 0.6), squeeze=False,
                             layout="constrained")
    return fig, [list(r) for r in axes]


def _mean_cells(cells: dict, g: str, model: str) -> dict:
    return {k[2:]: float(np.mean(vs)) for k, vs in cells.items() if k[:2] == (g, model)}


def _plain_ticks(cb) -> None:
    """A log colour bar with plain numbers at its ends and between (not 6x10^0)."""
    from matplotlib.ticker import FixedLocator, ScalarFormatter

    lo, hi = cb.mappable.norm.vmin, cb.mappable.norm.vmax
    ticks = np.unique(np.round(np.geomspace(lo, hi, 5), 2 if hi < 10 else 1))
    cb.ax.yaxis.set_major_locator(FixedLocator(ticks))
    cb.ax.yaxis.set_minor_locator(FixedLocator([]))
    fmt = ScalarFormatter()
    fmt.set_scientific(False)
    cb.ax.yaxis.set_major_formatter(fmt)
    cb.ax.tick_params(labelsize=8)


def _heat_panel(ax, mine: dict, norm, title: str, width: dict | None = None, onset: bool = False,
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
    if len(rounds) <= 12 and len(layers) <= 14:  # values a reader can take in
        for (y, x), v in np.ndenumerate(m):
            if np.isfinite(v):
                shade = norm(v) if norm is not None else 0.5
                ax.text(x, y, fmt.format(v), ha="center", va="center", fontsize=6.5,
                        color="black" if 0.35 < float(shade) < 0.85 or (cmap == "viridis" and shade >= 0.85) else "white")
    if onset:
        for y in range(len(layers)):
            row = m[y]
            first = next((v for v in row if np.isfinite(v)), None)
            hit = next((x for x, v in enumerate(row) if first and np.isfinite(v) and v <= ONSET * first), None)
            if hit is not None:
                ax.add_patch(Rectangle((hit - 0.5, y - 0.5), 1, 1, fill=False, edgecolor="#d62728", linewidth=1.6))
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
