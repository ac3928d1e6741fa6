"""A run's metrics as TensorBoard event files (``collapse-lab export tensorboard``,
``train --log tensorboard DIR``): per round the global model's numbers, each client's local
loss per epoch, and the probe's spectrum summaries (n above tau among the logged top 100, and
the measures of ``spectra.measures.PROBED``) with the logged spectrum as a histogram of its log10 singular values. One
sub-folder per run, named as the run. Needs the ``tensorboard`` package (the extra)."""
from __future__ import annotations

import math
from pathlib import Path

from ..errors import CollapseLabError
from ..spectra.functional import DEFAULT_TAU
from ..spectra.measures import PROBED
from ..store import RunDir

ROUND_KEYS = ("test_acc", "test_loss", "seconds", "local_seconds")
PROBE_KEYS = {f"probe_{m}": f"spectrum/{m}" for m in PROBED}  # the probe's measures (spectra.measures)


def _writer(logdir: Path):
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        raise CollapseLabError("TensorBoard logging needs the tensorboard package: pip install 'collapse-lab[tensorboard]'") from None
    return SummaryWriter(log_dir=str(logdir), flush_secs=3600)


def tag_values(run: RunDir, tau: float = DEFAULT_TAU) -> dict[str, list[tuple[int, float]]]:
    """The scalars a run's export holds: tag -> [(step, value)] (step: the round; for local
    losses round * 1000 + epoch), read from metrics.jsonl."""
    import numpy as np

    out: dict[str, list[tuple[int, float]]] = {}

    def add(tag, step, v):
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            out.setdefault(tag, []).append((int(step), float(v)))

    for e in run.metrics():
        kind, r = e.get("event"), e.get("round")
        if kind == "round":
            for k in ROUND_KEYS:
                add(f"global/{k}", r, e.get(k))
        elif kind == "local_epoch":
            add(f"client_{e['client']}/loss", r * 1000 + e["epoch"], e.get("loss"))
        elif kind == "probe":
            for k, tag in PROBE_KEYS.items():
                add(tag, r, e.get(k))
            if e.get("probe_sv"):
                add(f"spectrum/n_above_tau_{tau:g}", r, int((np.asarray(e["probe_sv"]) > tau).sum()))
    return out


def export(run: RunDir, logdir: Path, tau: float = DEFAULT_TAU) -> Path:
    """Write one run's event files under ``logdir/<run>``; returns that folder."""
    import numpy as np

    folder = Path(logdir) / run.path.name
    w = _writer(folder)
    try:
        for tag, points in tag_values(run, tau).items():
            for step, v in points:
                w.add_scalar(tag, v, step)
        for e in run.metrics():
            if e.get("event") == "probe" and e.get("probe_sv"):
                sv = np.asarray(e["probe_sv"], dtype=np.float64)
                w.add_histogram("spectrum/log10_singular_values", np.log10(np.maximum(sv, e.get("probe_floor") or 1e-300)),
                                e["round"])
    finally:
        w.close()
    return folder
