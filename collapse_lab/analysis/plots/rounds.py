"""How the spectrum, the count above tau and R evolve over communication rounds."""
from __future__ import annotations

import matplotlib as mpl
import numpy as np

from ...spectra.functional import log10_safe
from .style import decorate


def plot_spectra_over_rounds(ax, rounds: list[int], svs: list, floors: list[float], top: int = 100, title: str = ""):
    """One spectrum per round, coloured by round (one colour bar)."""
    cmap = mpl.colormaps["viridis"]
    lo, hi = min(rounds), max(rounds)
    for r, sv, fl in zip(rounds, svs, floors):
        y = log10_safe(sv[:top], fl).numpy()
        ax.plot(np.arange(1, len(y) + 1), y, color=cmap((r - lo) / max(hi - lo, 1)), linewidth=1.0)
    sm = mpl.cm.ScalarMappable(cmap=cmap, norm=mpl.colors.Normalize(lo, hi))
    ax.figure.colorbar(sm, ax=ax, label="round")
    return decorate(ax, "k", "log_sv", title, legend=False)


def plot_series(ax, series: dict[str, tuple[list[int], list[float]]], ylabel: str, title: str = ""):
    """Values over rounds, one line with markers per name."""
    for label, (x, y) in series.items():
        ax.plot(x, y, marker="o", markersize=3, label=label)
    return decorate(ax, "round", ylabel, title)
