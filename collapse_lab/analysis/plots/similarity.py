"""A models x models similarity matrix (CKA) as a heatmap."""
from __future__ import annotations

import numpy as np

from .style import decorate


def plot_matrix(ax, matrix, labels: list[str], title: str = "", vmin: float = 0.0, vmax: float = 1.0):
    m = np.asarray(matrix, dtype=float)
    im = ax.imshow(m, vmin=vmin, vmax=vmax, cmap="magma")
    ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=7)
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    cell = ax.get_position().width * ax.figure.get_figwidth() / max(len(labels), 1)  # inches, about
    if len(labels) <= 12 and cell >= 0.3:  # a "0.97" at 6 pt fits a cell of 0.3 in; narrower cells overlap
        for i in range(len(labels)):
            for j in range(len(labels)):
                ax.text(j, i, f"{m[i, j]:.2f}", ha="center", va="center", fontsize=6,
                        color="white" if m[i, j] < (vmin + vmax) / 2 else "black")
    ax.figure.colorbar(im, ax=ax, fraction=0.046)
    return decorate(ax, title=title, legend=False)
