"""One paper style for every figure of the catalogue: seaborn's paper context, a
colour-blind-safe palette, panels legible at one-column width (3.3 in), the papers' axis
labels."""
from __future__ import annotations

from .plots import plt

PANEL_W, PANEL_H = 3.3, 2.6  # inches: one column of a two-column paper per panel
LABELS = {"k": "k", "log_sv": "log10 singular value", "round": "round", "acc": "test accuracy (%)",
          "beta": "β", "epoch": "local epoch", "reg": "FedDecorr loss"}


def palette(n: int):
    import seaborn as sns

    return sns.color_palette("colorblind", n_colors=max(n, 1))


def figure(panels: int, cols: int | None = None, title: str = ""):
    """A figure with one axis per panel (``cols`` per row); returns (fig, axes list)."""
    import seaborn as sns

    sns.set_theme(context="paper", style="whitegrid", font_scale=1.0)
    cols = min(cols or panels, panels) or 1
    rows = -(-panels // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(PANEL_W * cols, PANEL_H * rows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[panels:]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title, fontsize=9)
    return fig, flat[:panels]


def finish(fig, note: str = ""):
    """Tight layout, and the quick form's differences from the paper at the bottom."""
    if note:
        fig.text(0.01, -0.01, note, fontsize=6, ha="left", va="top", color="0.35", wrap=True)
    import warnings

    with warnings.catch_warnings():  # 3-D axes and wide legends: the layout is the best it can be
        warnings.simplefilter("ignore", UserWarning)
        fig.tight_layout()
    return fig


def band(ax, x, y, sd, label: str, color, linestyle: str = "-"):
    """A mean line with a +-1 std band (none when sd is None: a single run)."""
    import numpy as np

    line, = ax.plot(x, y, label=label, color=color, linestyle=linestyle, linewidth=1.4)
    if sd is not None:
        y, sd = np.asarray(y), np.asarray(sd)
        ax.fill_between(x, y - sd, y + sd, color=line.get_color(), alpha=0.2, linewidth=0)
    return line
