"""A run's metrics logged to Weights & Biases as each round ends (``train --log wandb DIR``;
the ``wandb`` extra). Offline by default: the run is written under ``DIR/wandb/`` and
uploaded only if the user runs ``wandb sync`` (``WANDB_MODE=online`` logs live instead).
Project ``collapse-lab``, the W&B run named as the collapse-lab run, its configuration as
the W&B config. The scalars are TensorBoard's (``analysis.run_log``), one W&B step per round
(W&B's steps only increase): a client's local loss is its last epoch's of the round; under
``--probe-layers`` the layer x round heatmap is logged as an image each round."""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import CollapseLabError
from ..spectra.functional import DEFAULT_TAU
from ..store import RunDir
from .run_log import HEATMAP, RoundFeed, points, round_heatmap

PROJECT = "collapse-lab"


def round_rows(events: list[dict], tau: float = DEFAULT_TAU, local_epochs: int = 1) -> dict[int, dict[str, float]]:
    """round -> {tag: value}: the events' scalars, each client's local loss at its round's last
    epoch (W&B has one step a round; the epoch-by-epoch tags are TensorBoard's)."""
    rows: dict[int, dict[str, float]] = {}
    for e in events:
        for tag, step, v in points(e, tau, local_epochs):
            if not tag.endswith("/loss_by_epoch"):
                rows.setdefault(step, {})[tag] = v
    return rows


class WandbLog:
    """One collapse-lab run as one W&B run, written round by round (``update`` after each
    round; the first call logs every round stored so far)."""

    def __init__(self, folder: Path, run: RunDir, tau: float = DEFAULT_TAU, memo: dict | None = None):
        try:
            import wandb
        except ImportError:
            raise CollapseLabError("--log wandb needs the wandb package: pip install 'collapse-lab[wandb]'") from None
        self.wandb, self.tau, self.name, self.feed = wandb, tau, run.path.name, RoundFeed()
        self.memo = {} if memo is None else memo  # the run's heatmap, shared with its other live logs
        Path(folder).mkdir(parents=True, exist_ok=True)
        cfg = run.meta.get("config", {})
        self.run = wandb.init(project=PROJECT, name=run.path.name, dir=str(folder), config=cfg,
                              mode=os.environ.get("WANDB_MODE", "offline"), reinit="create_new",
                              tags=[str(cfg.get(k)) for k in ("dataset", "model", "method") if cfg.get(k)],
                              settings=wandb.Settings(silent=True, console="off", save_code=False))

    def update(self, run: RunDir) -> None:
        fresh = self.feed.new(run)
        rows = round_rows(fresh, self.tau, int(run.meta.get("local_epochs") or 1))
        if any(e.get("event") == "probe_layers" for e in fresh):
            img = round_heatmap(self.name, self.feed, self.memo)
            rows.setdefault(self.feed.done, {})[f"layers/{HEATMAP}"] = self.wandb.Image(img)
        for step in sorted(rows):
            self.run.log(rows[step], step=step)

    def close(self) -> None:
        self.run.finish()
