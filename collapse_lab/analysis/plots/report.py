"""One run's panel of the store report: accuracy, the logged global spectrum and its count
above tau and dead units over rounds, and CKA of the stored models at the last round."""
from __future__ import annotations

import numpy as np

from ...spectra.functional import log10_safe
from ...spectra.measures import Inputs, value
from .similarity import plot_matrix
from .style import decorate


def plot_run_panel(axes, acc: tuple[list, list], probes: list[dict], tau: float, cka=None, cka_labels=None,
                   title: str = ""):
    """``axes``: four axes; ``probes``: the run's probe records in round order."""
    a0, a1, a2, a3 = axes
    a0.plot(acc[0], [100 * v for v in acc[1]], marker="o", markersize=2)
    decorate(a0, "round", "acc", "global model")
    if probes:
        import matplotlib as mpl

        cmap = mpl.colormaps["viridis"]
        last = max(p["round"] for p in probes) or 1
        for p in probes:
            y = log10_safe(_t(p["probe_sv"]), p["probe_floor"]).numpy()
            a1.plot(np.arange(1, len(y) + 1), y, color=cmap(p["round"] / last), linewidth=0.8)
        a1.axhline(np.log10(tau), color="grey", linestyle=":", linewidth=0.8)
        decorate(a1, "k", "log_sv", "logged global spectrum (colour: round)")
        rounds = [p["round"] for p in probes]
        top = [_t(p["probe_sv"]) for p in probes]  # the logged top k: the "_top" count
        a2.plot(rounds, [value("n_significant_top", Inputs(t, 0.0, tau, len(t))) for t in top], marker="o", markersize=2,
                label=rf"above $\tau$ = {tau:g}")
        a2.plot(rounds, [p["probe_dead_units"] for p in probes], marker="s", markersize=2, label="dead units")
        decorate(a2, "round", "", "probe set")
    else:
        for ax in (a1, a2):
            ax.text(0.5, 0.5, "no probe records (trained with --probe 0,\nor recorded from other code)", ha="center",
                    va="center", fontsize=8)
    if cka is not None:
        plot_matrix(a3, cka, cka_labels, "linear CKA, last round", vmin=max(0.0, float(int(min(np.min(cka), 0.95) * 20)) / 20))
    else:
        a3.text(0.5, 0.5, "no client checkpoints at the last round", ha="center", va="center", fontsize=8)
        a3.set_axis_off()
    a0.figure.suptitle(title, fontsize=8)
    return a0.figure


def _t(values):
    import torch

    return torch.tensor(values, dtype=torch.float64)
