"""Test accuracy (%) of the global model at every round, mean +- std over seeds (ICLR
Fig. 4, journal Fig. 8, FedETF Fig. 5): one panel per ``panels`` entry (its ``where``),
one curve per configuration. ``smooth``: Gaussian smoothing of each curve with that sigma
in rounds (FedETF Fig. 5 uses 2), applied per seed before the mean.

Metrics per curve: ``final`` (mean accuracy over the last 10 % of rounds), ``last``, and
``jitter`` (std of the round-to-round change over the last 10 %)."""
from __future__ import annotations

import numpy as np

from .. import RENDERERS
from ..select import panel_labels
from ..context import Context
from ..plots.style import LABELS, band, decorate, entry_panels, finish_entry, palette


def accuracy_curve(run) -> tuple[list[int], list[float]]:
    """(rounds, test accuracy in %) from the run's round records (round 0 = the initial model)."""
    ev = {int(e["round"]): float(e["test_acc"]) * 100 for e in run.metrics()
          if e.get("event") == "round" and "test_acc" in e}
    rounds = sorted(ev)
    return rounds, [ev[r] for r in rounds]


def tail_mean(y) -> float:
    """The mean over the last 10 % of the rounds after round 0 (at least the last one)."""
    tail = max(1, int(round(0.1 * (len(y) - 1))))
    return float(np.mean(y[-tail:]))


def smooth(y: np.ndarray, sigma: float) -> np.ndarray:
    from scipy.ndimage import gaussian_filter1d

    return gaussian_filter1d(y, sigma, mode="nearest") if sigma > 0 else y


class Accuracy:
    metrics = ("final", "last", "jitter")  # what each series' ``metrics`` holds (the claims' names)
    @staticmethod
    def compute(entry, ctx: Context) -> dict:
        p = entry.params
        sigma = float(p.get("smooth", 0))
        panels = []
        for spec in p.get("panels", [{"title": ""}]):
            series = []
            for g, lab in zip(gs := ctx.groups(entry, spec.get("where")), panel_labels(gs)):
                curves = [accuracy_curve(run) for run in g.runs]
                n = min(len(c[0]) for c in curves)
                x = curves[0][0][:n]
                ys = np.stack([smooth(np.asarray(c[1][:n]), sigma) for c in curves])
                y = ys.mean(0)
                tail = max(1, int(round(0.1 * n)))
                series.append({"label": lab, "key": g.key, "x": x, "y": y.tolist(),
                               "y_std": ys.std(0).tolist() if len(curves) > 1 else None, "n": len(curves),
                               "runs": [run.path.name for run in g.runs],
                               "metrics": {"final": float(y[-tail:].mean()), "last": float(y[-1]),
                                           "jitter": float(np.std(np.diff(y[-tail - 1:]))) if tail > 1 else 0.0}})
            panels.append({"title": spec.get("title", ""), "series": series})
        return {"panels": panels}

    @staticmethod
    def draw(values: dict, entry):
        fig, panels = entry_panels(values, entry)
        for ax, panel in panels:
            for s, c in zip(panel["series"], palette(len(panel["series"]))):
                band(ax, s["x"], s["y"], s["y_std"], s["label"] + (f" (n={s['n']})" if s["n"] > 1 else ""), c)
            decorate(ax, LABELS["round"], LABELS["acc"], panel["title"], loc="lower right")
        return finish_entry(fig, entry, values, "bands")


RENDERERS.register("accuracy", kind="figure")(Accuracy)
