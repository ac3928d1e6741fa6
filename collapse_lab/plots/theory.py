"""Figures for the theory checks: Eq. 40 error against the step, sigma_k(t), rank of G(t), Fig. 6 heatmaps."""
from __future__ import annotations

import numpy as np
import seaborn as sns


def plot_step_errors(ax, studies: list[tuple[float, list[float], list[float]]]):
    """Relative error of Eq. 40 over time, one line per gradient-descent step size."""
    for eta, times, errs in studies:
        ax.semilogy(times, errs, marker="o", markersize=3, label=f"step {eta:g}")
    ax.set_xlabel("t (= steps x step size)")
    ax.set_ylabel("relative error of Eq. 40")
    ax.set_title("Eq. 40 vs measured d sigma_k/dt")
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
