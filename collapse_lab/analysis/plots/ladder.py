"""The ladder's figure: rungs (rows) x claims (columns), each cell coloured by the claim's
three-valued verdict at that rung (issue 48), with its deciding effect written in it; a
rung whose regime matches the rule of docs/scale.md is marked beside its name."""
from __future__ import annotations

from .style import use

COLOURS = {"holds": "#4daf4a", "refuted": "#e41a1c", "not resolved at this scale": "#fdd49e",
           "uninformative (measure saturated)": "#9ecae1", "n/a": "#ffffff"}
LEGEND = (("holds", "holds"), ("refuted", "refuted"), ("not resolved at this scale", "not resolved at this scale"),
          ("uninformative (measure saturated)", "uninformative (measure saturated)"),
          ("other", "no interval (one seed, or k-of-n only)"), ("n/a", "does not apply / not run"))


DARK = {"holds", "refuted"}


def colour(word: str) -> str:
    return COLOURS.get(word, "#bdbdbd")


def short(text: str) -> str:
    """A cell's effect to three significant digits (the interval is in LADDER.md)."""
    try:
        return f"{float(text):.3g}"
    except ValueError:
        return text


def draw(rungs: list[str], columns: list[str], cells: dict, matched: dict, title: str):
    """``cells[(rung, column)] = (verdict word, text)``; ``matched[rung]`` True where the
    rung is regime-matched for every entry it covers (None: no record of it yet)."""
    import matplotlib.patches as mpatches
    from . import plt

    use()
    w = max(6.0, 0.95 * len(columns) + 4.0)
    fig, ax = plt.subplots(figsize=(w, 0.5 * len(rungs) + 2.2), layout="constrained")
    for i, r in enumerate(rungs):
        for j, col in enumerate(columns):
            word, text = cells.get((r, col), ("n/a", ""))
            ax.add_patch(mpatches.Rectangle((j, i), 1, 1, facecolor=colour(word), edgecolor="white", linewidth=2))
            if text:
                ax.text(j + 0.5, i + 0.5, short(text), ha="center", va="center", fontsize=8,
                        color="white" if word in DARK else "black", fontweight="bold" if word in DARK else "normal")
    ax.set_xlim(0, len(columns))
    ax.set_ylim(len(rungs), 0)
    ax.set_xticks([j + 0.5 for j in range(len(columns))], columns, rotation=45, ha="right", fontsize=8)
    marks = {True: " (regime matched)", False: " (regime not matched)", None: " (not run)"}
    ax.set_yticks([i + 0.5 for i in range(len(rungs))], [r + marks[matched.get(r)] for r in rungs], fontsize=8)
    ax.grid(False)
    ax.set_title(title, fontsize=9)
    handles = [mpatches.Patch(facecolor=colour(k), edgecolor="#999999", label=lab) for k, lab in LEGEND]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return fig
