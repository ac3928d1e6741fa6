"""Regime measures of a run: how far its training got, beside what its spectra show
(issue 48; the rule that reads them is in docs/scale.md).

The papers train every client to (near) convergence in each round (FedDecorr §5.1: 10 local
epochs of SGD) for 100 rounds; a CPU-scale run may stop far short of that, and then a
collapsed or uncollapsed spectrum says as much about the regime as about the data's
heterogeneity. Per run:

- ``own_accuracy``: each client's final-round local model on its own training images
  (evaluation mode, no augmentation), and pooled over the clients (the accuracy on the
  union of their data, each image scored by its own client's model);
- ``plateau``: the change of global test accuracy from round R - 3 to the final round R,
  in points (a global model still climbing has not reached the papers' regime);
- ``dead units``: units of the representation z with no variance over the test images
  (at or below the numerical floor; ``spectra.rank``) for the final global model (a ReLU
  that never fires: its spectrum's direction is gone for another reason than
  heterogeneity);
- the training wall time (run.json ``train_seconds``, summed over the run's starts).
"""
from __future__ import annotations

import math

import torch

from ..errors import CollapseLabError
from ..models import build_model, builder
from ..spectra.rank import dead_units
from ..store import RunDir, retention

SPAN = 3  # rounds over which the plateau is measured (docs/scale.md)


def pooled_accuracy(correct: list[int], sizes: list[int]) -> float | None:
    """Accuracy over the union of the clients' images: sum(correct) / sum(sizes)."""
    n = sum(sizes)
    return None if n == 0 else sum(correct) / n


def plateau(test_acc: dict[int, float], span: int = SPAN) -> float | None:
    """acc(R) - acc(R - span) in points, R the last round with an accuracy; None when the
    run has fewer than span + 1 evaluated rounds."""
    if not test_acc:
        return None
    last = max(test_acc)
    if last - span not in test_acc:
        return None
    return 100.0 * (test_acc[last] - test_acc[last - span])


def test_accuracy(run: RunDir) -> dict[int, float]:
    """Round -> global test accuracy, from the run's metrics (the last record of a round
    wins: a resumed run may have logged it twice)."""
    out = {}
    for ev in run.metrics():
        if ev.get("event") == "round" and isinstance(ev.get("test_acc"), (int, float)):
            out[int(ev["round"])] = float(ev["test_acc"])
    return out


@torch.inference_mode()
def correct_on(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, to_float, batch_size: int = 1024) -> int:
    """How many rows of x the model classifies as y (evaluation mode, float32)."""
    model = model.float().eval()
    hits = 0
    for s in range(0, len(x), batch_size):
        logits = model(to_float(x[s: s + batch_size], torch.float32))[0]
        hits += int((logits.argmax(dim=1) == y[s: s + batch_size]).sum())
    return hits


def own_accuracy(run: RunDir, source, r: int) -> dict:
    """Each client's round-r local model on its own training images: ``per_client``
    accuracies, ``pooled`` (see module docstring), or ``missing`` (why not: the clients'
    checkpoints of round r were not kept). ``source``: a ``FeatureSource`` on the train
    split (it reads the run's data set as its model saw it)."""
    cfg = run.config
    ds, _ = source.dataset(cfg)
    part = run.partition()
    correct, sizes, per_client = [], [], []
    for k, idx in enumerate(part.client_indices):
        if len(idx) == 0:
            continue
        with retention.read_lock(run.path):
            if not run.has_client(r, k):
                return {"missing": f"client {k}'s model of round {r} is not stored (train with --keep-local last "
                                   "or the ladder, which keeps it)"}
            model = build_model(builder(cfg.model, cfg.model_revision), ds.num_classes, ds.input_shape)
            model.load_state_dict(run.load_state(r, k, model, extra_ok=True))
        ix = torch.as_tensor(idx, dtype=torch.long)
        c = correct_on(model, ds.train_x[ix], ds.train_y[ix], ds.to_float)
        correct.append(c)
        sizes.append(len(idx))
        per_client.append(c / len(idx))
    return {"per_client": per_client, "pooled": pooled_accuracy(correct, sizes), "min": min(per_client)}


def measure_run(run: RunDir, test_source, train_source, r: int | None = None) -> dict:
    """The regime measures of a complete run at round r (default: its last complete round;
    a run extended beyond the rounds a ladder's rung trains is measured where the rung ends)."""
    meta = run.meta
    r = int(meta.get("rounds_complete") or 0) if r is None else r
    if r < 1 or r > int(meta.get("rounds_complete") or 0):
        raise CollapseLabError(f"{run.path.name}: round {r} is not complete (it has {meta.get('rounds_complete')})")
    z = test_source.features(run, r, None)
    acc = {q: a for q, a in test_accuracy(run).items() if q <= r}
    own = own_accuracy(run, train_source, r)
    secs = meta.get("train_seconds")
    done = int(meta.get("rounds_complete") or r)
    if secs is not None and done > r:  # extended beyond r: its share of the rounds (said in the record)
        secs = float(secs) * r / done
    return {"run": run.path.name, "round": r, "test_acc": acc.get(r), "plateau_points": plateau(acc),
            "dead_units": len(dead_units(z)), "units": int(z.shape[1]),
            "own_acc": own.get("pooled"), "own_acc_min_client": own.get("min"),
            **({"own_acc_missing": own["missing"]} if "missing" in own else {}),
            "train_seconds": None if secs is None or not math.isfinite(float(secs)) else round(float(secs), 1),
            **({"train_seconds_of": f"{r} of {done} rounds (the run was extended beyond this rung)"} if done > r else {})}
