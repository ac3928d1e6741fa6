"""The one plot style of the project (catalogue figures and the analysis commands alike):
seaborn's paper context, a colour-blind-safe palette, panels legible at one-column width
(3.3 in), the papers' axis labels in mathtext, one way to finish an axis."""
from __future__ import annotations

from . import plt

PANEL_W, PANEL_H = 3.3, 2.6  # inches: one column of a two-column paper per panel
LABELS = {"k": "$k$", "log_sv": r"$\log_{10}$ singular value", "round": "round", "acc": "test accuracy (%)",
          "beta": r"$\beta$", "epoch": "local epoch", "reg": "FedDecorr loss", "t": "$t$",
          "R": "$R$ (local vs global)"}


def axis_label(name: str) -> str:
    """An axis's label: ``LABELS``, else a registered measure's (``spectra.measures``), else the text."""
    from ...spectra.measures import MEASURES, label

    return LABELS[name] if name in LABELS else label(name) if name in MEASURES else name


def use() -> None:
    """Apply the paper style (seaborn paper context, white grid) to the figures made next."""
    import seaborn as sns

    sns.set_theme(context="paper", style="whitegrid", font_scale=1.0)


# seaborn's colour-blind palette with its vermillion moved behind the pink: in its own order
# the 2nd and 4th colours (orange, vermillion) are 0.20 apart in RGB, too close for four alphas
ORDER = (0, 1, 2, 4, 3, 5, 6, 7, 8, 9)


def palette(n: int):
    import seaborn as sns

    base = sns.color_palette("colorblind", n_colors=10)
    cols = [base[i] for i in ORDER]
    return [cols[i % len(cols)] for i in range(max(n, 1))]


def figure(panels: int, cols: int | None = None, title: str = "", sharey: bool = False, scale: float = 1.0):
    """A figure with one axis per panel (``cols`` per row); returns (fig, axes list).
    ``scale`` enlarges every panel (figures of the commands, read on a screen)."""
    use()
    cols = min(cols or panels, panels) or 1
    rows = -(-panels // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(PANEL_W * cols * scale, PANEL_H * rows * scale), squeeze=False,
                             sharey=sharey)
    flat = [ax for row in axes for ax in row]
    for ax in flat[panels:]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title, fontsize=9)
    return fig, flat[:panels]


def grid(rows: int, cols: int, scale: float = 1.5, sharey: bool = False):
    """A rows x cols figure in the paper style for the analysis commands (panels ``scale``
    times a paper column, for a screen); returns (fig, axes as a list of rows)."""
    use()
    fig, axes = plt.subplots(rows, cols, figsize=(PANEL_W * cols * scale, PANEL_H * rows * scale), squeeze=False,
                             sharey=sharey, layout="constrained")
    return fig, [list(r) for r in axes]


def panels(n: int, max_cols: int = 2):
    """``n`` panels at paper size (one column each), at most ``max_cols`` to a row, the
    unused axes of the last row hidden; returns (fig, the n axes). A figure of many runs
    wraps into rows instead of a strip too wide to read when printed."""
    import math

    cols = max(1, min(n, max_cols))
    rows = max(1, math.ceil(n / cols))
    fig, axes = grid(rows, cols, scale=1.0)
    flat = [ax for row in axes for ax in row]
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def spread_note(values: dict, what: str = "bands") -> str:
    """The line under a figure that says what its spread shows (the papers' bands are
    +-1 std over seeds); empty when no series averages several runs."""
    ns = sorted({s["n"] for p in values.get("panels", []) for s in p.get("series", [])
                 if s.get("y_std") is not None and s.get("n", 1) > 1})
    if not ns:
        return ""
    n = str(ns[0]) if len(ns) == 1 else f"{ns[0]}-{ns[-1]}"
    return f"lines: the mean over {n} seeds; {what}: +-1 standard deviation over seeds"


def decorate(ax, xlabel: str = "", ylabel: str = "", title: str = "", legend: bool = True, loc: str = "best"):
    """Axis labels (keys of ``LABELS`` or text), a small title, a frameless legend when
    something is labelled; returns the figure (plot functions return it)."""
    ax.set_xlabel(axis_label(xlabel))
    ax.set_ylabel(axis_label(ylabel))
    if title:
        ax.set_title(title, fontsize=8)
    if legend and any(not h.get_label().startswith("_") for h in ax.get_lines() + ax.collections):
        ax.legend(fontsize=6, frameon=False, loc=loc)
    return ax.figure


def finish(fig, note: str = ""):
    """Tight layout, and the quick form's differences from the paper at the bottom."""
    if note:
        import textwrap

        # wrapped here, to the figure's width (~22 characters an inch at 6 pt): matplotlib's own
        # wrap lets a line run past the right edge of a tight-cropped figure
        fig.text(0.01, -0.01, textwrap.fill(note, width=max(40, int(fig.get_figwidth() * 22))), fontsize=6,
                 ha="left", va="top", color="0.35")
    import warnings

    with warnings.catch_warnings():  # 3-D axes, colour bars and wide legends: the layout is the best it can be
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


def entry_panels(values: dict, entry):
    """A catalogue figure's axes, one per panel of its values (the entry's ``cols`` per
    row): (fig, [(axis, panel), ...])."""
    fig, axes = figure(len(values["panels"]), entry.params.get("cols"))
    return fig, list(zip(axes, values["panels"]))


def finish_entry(fig, entry, values: dict, spread: str = "bands"):
    """``finish`` with the entry's differences from the paper and what its spread shows."""
    return finish(fig, "; ".join(t for t in (*entry.differs, spread_note(values, spread)) if t))
