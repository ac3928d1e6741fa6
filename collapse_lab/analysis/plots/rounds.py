"""How the spectrum, the count above tau and R evolve over communication rounds."""
from __future__ import annotations

import matplotlib as mpl
import numpy as np

from ...spectra.functional import log10_safe


def plot_spectra_over_rounds(ax, rounds: list[int], svs: list, floors: list[float], top: int = 100, title: str = ""):
    cmap = mpl.colormaps["viridis"]
    lo, hi = min(rounds), max(rounds)
    for r, sv, fl in zip(rounds, svs, floors):
        y = log10_safe(sv[:top], fl).numpy()
        ax.plot(np.arange(1, len(y) + 1), y, color=cmap((r - lo) / max(hi - lo, 1)), linewidth=1.0)
    sm = mpl.cm.ScalarMappable(cmap=cmap, norm=mpl.colors.Normalize(lo, hi))
    ax.figure.colorbar(sm, ax=ax, label="round")
    ax.set_xlabel("k")
    ax.set_ylabel("log10 singular value")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    return ax.figure


def plot_series(ax, series: dict[str, tuple[list[int], list[float]]], ylabel: str, title: str = ""):
    for label, (x, y) in series.items():
        ax.plot(x, y, marker="o", markersize=3, label=label)
    ax.set_xlabel("round")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8, frameon=False)
    ax.grid(alpha=0.3)
    return ax.figure
