"""Which clients take part in a round: drawn from the run's seed and the round alone, so a
resumed run samples exactly as an uninterrupted one."""
from __future__ import annotations

import numpy as np

from ..config import RunConfig, clients_per_round
from ..seeds import PURPOSE_SAMPLE, seed_for


def sample_clients(cfg: RunConfig, r: int) -> list[int]:
    """The clients taking part in round r, drawn from the run's seed and r alone."""
    m = clients_per_round(cfg)
    if m >= cfg.clients:
        return list(range(cfg.clients))
    rng = np.random.default_rng(seed_for(cfg.seed, PURPOSE_SAMPLE, r))
    return sorted(int(k) for k in rng.choice(cfg.clients, size=m, replace=False))
