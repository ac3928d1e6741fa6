"""Figures for the theory checks: Eq. 40 error against the step, sigma_k(t), rank of G(t), Fig. 6 heatmaps."""
from __future__ import annotations

import numpy as np
import seaborn as sns


def plot_step_errors(ax, studies: list[tuple[float, list[float], list[float]]]):
    """Relative error of Eq. 40 over time, one line per gradient-descent step size."""
    for eta, times, errs in studies:
        ax.semilogy(times, errs, marker="o", markersize=3, label=f"step {eta:g}")
    return _label(ax, "t (= steps x step size)", "relative error of Eq. 40", "Eq. 40 vs measured d sigma_k/dt")


def plot_rank_paths(ax, ranks: list[tuple[str, list[float], list[float]]]):
    """Effective rank of G(t) (Eq. 4) over time, one line per alpha."""
    for alpha, times, rank in ranks:
        ax.plot(times, rank, marker="o", markersize=2, label=f"alpha={alpha}")
    return _label(ax, "t", "effective rank of G(t)", "rank of G(t) (Eq. 4)")


def _label(ax, xlabel: str, ylabel: str, title: str):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8, frameon=False)
    ax.grid(alpha=0.3)
    return ax.figure


def plot_sigma_paths(ax, times: np.ndarray, sigma: np.ndarray, k: int, title: str):
    for j in range(min(k, sigma.shape[1])):
        ax.plot(times, sigma[:, j], linewidth=1.0)
    ax.set_xlabel("t")
    ax.set_ylabel("sigma_k of Pi(t)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    return ax.figure


def plot_alignment(ax, a: np.ndarray, title: str):
    """Fig. 6: |u_k^T v_{L+1,k'}|, rows k (Pi's left singular vectors), columns k' (W_{L+1}'s right)."""
    sns.heatmap(a, ax=ax, vmin=0, vmax=1, cmap="viridis", square=True, cbar=True,
                xticklabels=np.arange(1, a.shape[1] + 1), yticklabels=np.arange(1, a.shape[0] + 1))
    ax.set_xlabel("k' (W_{L+1})")
    ax.set_ylabel("k (Pi)")
    ax.set_title(title, fontsize=9)
    return ax.figure


def thm1_figure(studies, ranks, results: dict, kmax: int, eta: float, title: str):
    """The ``theory thm1`` figure: Eq. 40's error against the step, the effective rank of
    G(t) per alpha (``ranks``: (alpha, times, ranks)), and sigma_k(t) per alpha (``results``:
    alpha -> simulation with ``sigma_all``)."""
    from . import plt

    n = len(results)
    fig, axes = plt.subplots(2, max(n, 2), figsize=(4.2 * max(n, 2), 7.5), squeeze=False)
    plot_step_errors(axes[0][0], studies)
    plot_rank_paths(axes[0][1], ranks)
    for j in range(2, max(n, 2)):
        axes[0][j].axis("off")
    for ax, (a, res) in zip(axes[1], results.items()):
        times = np.arange(res.sigma_all.shape[0]) * eta
        plot_sigma_paths(ax, times, res.sigma_all, kmax, f"alpha={a}: sigma_k(t), k <= {kmax}")
    for j in range(n, max(n, 2)):
        axes[1][j].axis("off")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def alignment_figure(results: dict, depth: int):
    """Fig. 6: |u_k^T v_(L+1),k'| heatmaps, one row per alpha, one column per recorded time."""
    from . import plt

    n = len(results)
    times = list(next(iter(results.values())).alignment)
    fig, axes = plt.subplots(n, len(times), figsize=(3.6 * len(times), 3.2 * n), squeeze=False)
    for row, (a, res) in zip(axes, results.items()):
        for ax, t in zip(row, times):
            plot_alignment(ax, res.alignment[t], f"alpha={a}, t={t:g}")
    fig.suptitle(f"|u_k^T v_(L+1),k'| (Fig. 6), L = {depth}")
    fig.tight_layout()
    return fig
