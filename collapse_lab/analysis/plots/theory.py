"""Figures for the theory checks (journal Sec. 4): Eq. 40's error against the step,
sigma_k(t), the rank of G(t) (Eq. 4), and Fig. 6's alignment heatmaps."""
from __future__ import annotations

import numpy as np

from .style import decorate, figure, finish


def _num(x: float) -> str:
    """A time or step for a label: 3 significant digits (t = 0.4, not t = 0.3998)."""
    return f"{float(f'{x:.3g}'):g}"


def plot_step_errors(ax, studies: list[tuple[float, list[float], list[float]]]):
    """Relative error of Eq. 40 over time, one line per gradient-descent step size."""
    for eta, times, errs in studies:
        ax.semilogy(times, errs, marker="o", markersize=3, label=rf"step $\eta$ = {_num(eta)}")
    return decorate(ax, r"$t$ (= steps $\times$ step size)", "relative error of Eq. 40",
                    r"Eq. 40 vs measured $d\sigma_k/dt$")


def plot_rank_paths(ax, ranks: list[tuple[str, list[float], list[float]]]):
    """Effective rank of G(t) (Eq. 4) over time, one line per alpha."""
    for alpha, times, rank in ranks:
        ax.plot(times, rank, marker="o", markersize=2, label=rf"$\alpha$ = {alpha}")
    return decorate(ax, "t", "effective rank of $G(t)$", "rank of $G(t)$ (Eq. 4)")


def plot_sigma_paths(ax, times: np.ndarray, sigma: np.ndarray, k: int, title: str):
    for j in range(min(k, sigma.shape[1])):
        ax.plot(times, sigma[:, j], linewidth=1.0)
    return decorate(ax, "t", r"$\sigma_k$ of $\Pi(t)$", title, legend=False)


def plot_alignment(ax, a: np.ndarray, title: str, cbar: bool = False):
    """Fig. 6: |u_k^T v_{L+1,k'}|, rows k (Pi's left singular vectors), columns k' (W_{L+1}'s
    right); values in [0, 1], so the panels of a figure share one colour bar."""
    import seaborn as sns

    sns.heatmap(a, ax=ax, vmin=0, vmax=1, cmap="viridis", square=True, cbar=cbar,
                xticklabels=np.arange(1, a.shape[1] + 1), yticklabels=np.arange(1, a.shape[0] + 1))
    ax.tick_params(labelsize=5)
    return decorate(ax, r"$k'$ ($W_{L+1}$)", r"$k$ ($\Pi$)", title, legend=False)


def thm1_figure(studies, ranks, results: dict, kmax: int, eta: float, title: str):
    """The ``theory thm1`` figure: Eq. 40's error against the step, the effective rank of
    G(t) per alpha (``ranks``: (alpha, times, ranks)), and sigma_k(t) per alpha (``results``:
    alpha -> simulation with ``sigma_all``)."""
    total = 2 + len(results)  # the two summaries, then one sigma_k(t) panel per alpha: no empty slot where
    cols = 3 if total % 3 == 0 or total % 2 else 2  # the count allows (5 panels: one)
    fig, axes = figure(total, cols, title, scale=1.2)
    plot_step_errors(axes[0], studies)
    plot_rank_paths(axes[1], ranks)
    for ax in axes[:2]:  # a legend a reader can read, on a frame, where it hides the least
        if ax.get_legend() is not None:
            ax.legend(fontsize=8, frameon=True, framealpha=0.85, loc="best")
    for ax, (a, res) in zip(axes[2:], results.items()):
        times = np.arange(res.sigma_all.shape[0]) * eta
        plot_sigma_paths(ax, times, res.sigma_all, kmax, rf"$\alpha$ = {a}: $\sigma_k(t)$, $k \leq {kmax}$")
    return finish(fig)


def alignment_figure(results: dict, depth: int):
    """Fig. 6: |u_k^T v_(L+1),k'| heatmaps, one row per alpha, one column per recorded time,
    one colour bar for all."""
    n = len(results)
    times = list(next(iter(results.values())).alignment)
    fig, axes = figure(n * len(times), len(times), rf"$|u_k^\top v_{{L+1,k'}}|$ (journal Fig. 6), $L$ = {depth}")
    for i, (a, res) in enumerate(results.items()):
        for j, t in enumerate(times):
            plot_alignment(axes[i * len(times) + j], res.alignment[t], rf"$\alpha$ = {a}, $t$ = {_num(t)}")
    finish(fig)
    import matplotlib as mpl

    sm = mpl.cm.ScalarMappable(cmap="viridis", norm=mpl.colors.Normalize(0, 1))
    fig.colorbar(sm, ax=axes, shrink=0.8, label="alignment")
    return fig
