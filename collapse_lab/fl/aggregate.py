"""Server aggregation as pure functions on state dicts."""
from __future__ import annotations

from typing import Sequence

import torch


def weighted_average(states: Sequence[dict[str, torch.Tensor]], weights: Sequence[float]) -> dict[str, torch.Tensor]:
    """FedAvg (McMahan et al. 2017): sum_k (n_k / sum n) w_k for every parameter and buffer.

    Sums run in float64 so the result does not depend on client order beyond round-off
    of the final cast. Integer buffers (BatchNorm's num_batches_tracked) are averaged and
    rounded.
    """
    if not states:
        raise ValueError("no client states to aggregate")
    w = torch.tensor([float(x) for x in weights], dtype=torch.float64)
    if (w < 0).any() or w.sum() <= 0:
        raise ValueError("aggregation weights must be non-negative with a positive sum")
    w = w / w.sum()
    out = {}
    for key, ref in states[0].items():
        acc = torch.zeros(ref.shape, dtype=torch.float64, device=ref.device)
        for wk, s in zip(w, states):
            acc += wk.item() * s[key].to(torch.float64)
        out[key] = acc.round().to(ref.dtype) if not ref.is_floating_point() else acc.to(ref.dtype)
    return out
