"""Fig. 2/3 (FedDecorr) and Fig. 4/6 (journal) style spectrum plots."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import seaborn as sns
import torch

from ...spectra.functional import log10_safe


@dataclass
class Curve:
    """One line: a run's singular values ``sv`` (floored at ``floor``), or, for the seeds of
    one configuration, ``mean``/``std`` of their log10 values (a band of +-1 std)."""

    label: str
    sv: torch.Tensor | None
    floor: float = 0.0
    color: object = None
    linestyle: str = "-"
    mean: torch.Tensor | None = None
    std: torch.Tensor | None = None


def alpha_colors(alphas: list[str]) -> dict[str, object]:
    """One colour per alpha, ordered from most skewed to IID."""
    order = sorted(set(alphas), key=lambda a: float(a))
    pal = sns.color_palette("viridis", n_colors=max(len(order), 1))
    return dict(zip(order, pal))


def plot_spectrum(ax, curves: list[Curve], top: int = 100, tau: float | None = 1e-2, title: str = ""):
    """Top-``top`` singular values on a log10 y-axis, index k from 1 (as in Fig. 2)."""
    for c in curves:
        y = (c.mean[:top] if c.mean is not None else log10_safe(c.sv[:top], c.floor)).numpy()
        k = np.arange(1, len(y) + 1)
        line, = ax.plot(k, y, label=c.label, color=c.color, linestyle=c.linestyle, linewidth=1.6)
        if c.std is not None:
            sd = c.std[:top].numpy()
            ax.fill_between(k, y - sd, y + sd, color=line.get_color(), alpha=0.2, linewidth=0)
    if tau is not None:
        ax.axhline(np.log10(tau), color="0.5", linewidth=0.8, linestyle=":", label=f"log10 tau = {np.log10(tau):g}")
    ax.set_xlabel("k")
    ax.set_ylabel("log10 singular value")
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8, frameon=False)
    ax.grid(alpha=0.3)
    return ax.figure


def plot_compare(ax, local: Curve, glob: Curve, r_value: float, k_used: int, top: int = 100, title: str = ""):
    """Journal Fig. 4/6: local and global curves of one run in one plot, R in the corner."""
    plot_spectrum(ax, [local, glob], top=top, tau=None, title=title)
    ax.text(0.97, 0.97, f"R = {r_value:.3f}\n(K = {k_used})", transform=ax.transAxes, ha="right", va="top",
            fontsize=10, bbox=dict(boxstyle="round", facecolor="white", alpha=0.8))
    return ax.figure
