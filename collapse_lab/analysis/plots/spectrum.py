"""The spectrum plot (FedDecorr Fig. 2/3, journal Fig. 4/6): the one plotter behind
``collapse-lab spectrum``/``compare`` and the catalogue's ``spectra`` figures."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...spectra.functional import log10_safe
from .style import band, decorate


@dataclass
class Curve:
    """One line: a run's singular values ``sv`` (floored at ``floor``), or, for the seeds of
    one configuration, ``mean``/``std`` of their log10 values (a band of +-1 std)."""

    label: str
    sv: object = None  # torch tensor of singular values
    floor: float = 0.0
    color: object = None
    linestyle: str = "-"
    mean: object = None  # log10 values (tensor, array or list)
    std: object = None


def alpha_colors(alphas: list[str]) -> dict[str, object]:
    """One colour per alpha, ordered from most skewed to IID, from the colour-blind palette
    (qualitative: neighbouring alphas stay apart, which a sequential map's do not)."""
    from .style import palette

    order = sorted(set(alphas), key=lambda a: float(a))
    return dict(zip(order, palette(len(order))))


def plot_spectrum(ax, curves: list[Curve], top: int = 100, tau: float | None = 1e-2, title: str = ""):
    """Top-``top`` singular values on a log10 y-axis, index k from 1 (as in Fig. 2), a
    +-1 std band over seeds, the threshold tau dotted."""
    for c in curves:
        y = np.asarray(c.mean[:top] if c.mean is not None else log10_safe(c.sv[:top], c.floor).numpy(), dtype=float)
        sd = None if c.std is None else np.asarray(c.std[:top], dtype=float)
        band(ax, np.arange(1, len(y) + 1), y, sd, c.label, c.color, c.linestyle)
    if tau is not None:
        ax.axhline(np.log10(tau), color="0.5", linewidth=0.8, linestyle=":", label=rf"$\tau$ = {tau:g}")
    return decorate(ax, "k", "log_sv", title)


def plot_compare(ax, local: Curve, glob: Curve, r_value: float, k_used: int, top: int = 100, title: str = ""):
    """Journal Fig. 4/6: local and global curves of one run in one plot, R in the corner."""
    plot_spectrum(ax, [local, glob], top=top, tau=None, title=title)
    ax.text(0.97, 0.97, f"$R$ = {r_value:.3f}\n($K$ = {k_used})", transform=ax.transAxes, ha="right", va="top",
            fontsize=8, bbox=dict(boxstyle="round", facecolor="white", alpha=0.8))
    return ax.figure
