"""What a run's live logs show (``train --log tensorboard|wandb DIR``, ``collapse-lab export``):
its metrics.jsonl events as scalars (tag, step, value), the per-layer measures of ``train
--probe-layers`` as scalars and as a layer x round heatmap image, and which rounds a logger
has already written. One home for the tags, so TensorBoard and W&B show the same numbers."""
from __future__ import annotations

import math

import numpy as np
import torch

from ..spectra.functional import DEFAULT_TAU
from ..spectra.measures import PER_LAYER, PROBED, Inputs, value
from ..store import RunDir

ROUND_KEYS = ("test_acc", "test_loss", "seconds", "local_seconds")
PROBE_KEYS = {f"probe_{m}": f"spectrum/{m}" for m in PROBED}  # the probe's measures (spectra.measures)
HEATMAP = "effective_rank"  # the measure of the layer x round image


def points(e: dict, tau: float = DEFAULT_TAU, local_epochs: int = 1) -> list[tuple[str, int, float]]:
    """One event's scalars as (tag, step, value): the step is the round, so every tag shares
    one x axis. A client's local loss is ``client_k/loss`` at its round (the round's last
    epoch, ``local_epochs``) and, epoch by epoch, ``client_k/loss_by_epoch`` at step
    (round - 1) * local_epochs + epoch (the local epochs counted over the run). Non-finite and
    non-numeric values are left out."""
    kind, r = e.get("event"), e.get("round")
    out = []
    if kind == "round":
        out = [(f"global/{k}", r, e.get(k)) for k in ROUND_KEYS]
    elif kind == "local_epoch":
        out = [(f"client_{e['client']}/loss_by_epoch", (r - 1) * local_epochs + e["epoch"], e.get("loss"))]
        if e["epoch"] == local_epochs:
            out.append((f"client_{e['client']}/loss", r, e.get("loss")))
    elif kind == "probe":
        out = [(tag, r, e.get(k)) for k, tag in PROBE_KEYS.items()]
        if e.get("probe_sv"):
            sv = torch.tensor(e["probe_sv"], dtype=torch.float64)  # the logged top k: the "_top" measure
            out.append(("spectrum/n_significant_top", r, value("n_significant_top", Inputs(sv, 0.0, tau, len(sv)))))
    elif kind == "probe_layers":
        out = [(f"layers/{e['model']}/{layer}/{m}", r, v.get(m)) for layer, v in e["layers"].items()
               for m in PER_LAYER]
    return [(t, int(s), float(v)) for t, s, v in out
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)]


def layer_rows(events: list[dict], run_name: str) -> list[dict]:
    """The probe_layers events as the heatmap's rows (``analysis.plots.layers``)."""
    return [{"run": run_name, "model": e["model"], "round": e["round"], "layer": layer, **v}
            for e in events if e.get("event") == "probe_layers" for layer, v in e["layers"].items()]


def heatmap_rgb(rows: list[dict], title: str) -> np.ndarray:
    """The layer x round heatmap of ``HEATMAP`` as an H x W x 3 uint8 image."""
    from .plots import plt
    from .plots.layers import heatmap_figure

    fig = heatmap_figure(rows, HEATMAP, title)
    fig.set_dpi(80)
    fig.canvas.draw()
    img = np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()
    plt.close(fig)
    return img


def round_heatmap(run_name: str, feed: "RoundFeed", memo: dict) -> np.ndarray:
    """The heatmap of every probe_layers event a feed has seen; ``memo`` (one per run, shared
    by its live logs) keeps the last one drawn, so TensorBoard and W&B show one drawing."""
    key = (run_name, feed.done, len(feed.layers))
    if memo.get("key") != key:
        memo.update(key=key, img=heatmap_rgb(layer_rows(feed.layers, run_name), run_name))
    return memo["img"]


class RoundFeed:
    """The events of the rounds a logger has not written yet: each call returns those of
    every round stored since the last (all of them the first time; a resumed run's earlier
    rounds included), and every probe_layers event so far (the heatmap's)."""

    def __init__(self):
        self.done = -1
        self.layers: list[dict] = []

    def new(self, run: RunDir) -> list[dict]:
        last = int(run.meta.get("rounds_complete", 0) or 0)
        fresh = [e for e in run.metrics() if isinstance(e.get("round"), int) and self.done < e["round"] <= last]
        self.layers += [e for e in fresh if e.get("event") == "probe_layers"]
        self.done = max(self.done, last)
        return fresh
