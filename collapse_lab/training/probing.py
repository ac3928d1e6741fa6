"""The training probe's place in a round (``training.probe`` measures): the global model's
spectrum on the probe set after each round and, with ``--probe-layers``, each layer's; a
representation that stops being finite is the run's divergence (``stops.diverged``)."""
from __future__ import annotations

import torch

from .probe import NonFiniteProbe, Probe, probe_indices
from .stops import diverged


def make_probe(cfg, ds, device) -> Probe | None:
    """The probe on its fixed, seeded test samples (``training.probe``); None with --probe 0."""
    if cfg.probe == 0:
        return None
    return Probe(ds.test_x[probe_indices(len(ds.test_y), cfg.probe, cfg.seed)].to(device), ds.to_float,
                 cfg.eval_batch_size)


def probe_round(ctx, r: int, global_state: dict) -> None:
    """The global model's spectrum on the probe set, logged (``training.probe``)."""
    if ctx.probe is None:
        return
    ctx.model.load_state_dict(global_state)  # a personalised evaluation leaves a client's model loaded
    try:
        probed = ctx.probe(ctx.model)
    except (NonFiniteProbe, torch.linalg.LinAlgError) as e:
        diverged(ctx, r, None, f"representation on the probe set ({e})")
    ctx.run.log({"event": "probe", "round": r, **probed})
    if ctx.cfg.probe_layers:
        log_layers(ctx, r, None, "global")


def log_layers(ctx, r: int, client: int | None, which: str) -> None:
    """--probe-layers: each layer's measures of the model loaded in ``ctx.model`` (``Probe.layers``)."""
    try:
        probed = ctx.probe.layers(ctx.model)
    except (NonFiniteProbe, torch.linalg.LinAlgError) as e:
        diverged(ctx, r, client, f"a layer's covariance on the probe set ({e})")
    ctx.run.log({"event": "probe_layers", "round": r, "model": which, **probed})
