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


SERVER_OPTIMIZERS = ("sgdm", "adagrad", "yogi", "adam")


def server_opt_step(global_state: dict[str, torch.Tensor], average: dict[str, torch.Tensor],
                    moments: dict[str, dict[str, torch.Tensor]] | None, keys: Sequence[str], kind: str, lr: float,
                    beta1: float = 0.9, beta2: float = 0.99, tau: float = 1e-3
                    ) -> tuple[dict[str, torch.Tensor], dict[str, dict[str, torch.Tensor]]]:
    """One server step of FedOpt (Reddi et al. 2021, Alg. 2) on the entries in ``keys``;
    every other entry (BatchNorm statistics) is taken from the average.

    With the pseudo-gradient g = x - avg_k x_k (the paper's -Delta_t):

    - ``sgdm`` (FedAvgM, Hsu et al. 2019, Alg. 1): m <- beta1 m + g, x <- x - lr m. With
      beta1 = 0 and lr = 1 this is FedAvg.
    - adaptive: m <- beta1 m + (1 - beta1) g, x <- x - lr m / (sqrt(v) + tau), with
      ``adagrad`` v <- v + g^2, ``yogi`` v <- v - (1 - beta2) g^2 sign(v - g^2),
      ``adam`` v <- beta2 v + (1 - beta2) g^2; m starts at 0 and v at tau^2 (Alg. 2:
      v_{-1} >= tau^2); no bias correction (Alg. 2 has none).

    ``moments``: {"m": ..., "v": ...} per key from the previous round (None: the first).
    Moments are float64; the new entries are cast back to the state's dtype.
    """
    if kind not in SERVER_OPTIMIZERS:
        raise ValueError(f"unknown server optimizer {kind!r}")
    out = dict(average)
    new_m, new_v = {}, {}
    prev_m = (moments or {}).get("m", {})
    prev_v = (moments or {}).get("v", {})
    for key in keys:
        w = global_state[key].to(torch.float64)
        g = w - average[key].to(torch.float64)
        if kind == "sgdm":
            m = g if key not in prev_m else beta1 * prev_m[key] + g
            out[key] = (w - lr * m).to(global_state[key].dtype)
            new_m[key] = m
            continue
        m = (1 - beta1) * g if key not in prev_m else beta1 * prev_m[key] + (1 - beta1) * g
        v = prev_v[key] if key in prev_v else torch.full_like(w, tau * tau)
        g2 = g * g
        if kind == "adagrad":
            v = v + g2
        elif kind == "yogi":
            v = v - (1 - beta2) * g2 * torch.sign(v - g2)
        else:
            v = beta2 * v + (1 - beta2) * g2
        out[key] = (w - lr * m / (v.sqrt() + tau)).to(global_state[key].dtype)
        new_m[key], new_v[key] = m, v
    return out, ({"m": new_m} if kind == "sgdm" else {"m": new_m, "v": new_v})


def momentum_norm(steps: int, momentum: float) -> float:
    """||a_i||_1 of FedNova (Wang et al. 2020, Sec. 4 and App.) for SGD with heavy-ball
    momentum rho over tau steps: sum_{t=1}^{tau} (1 - rho^t) / (1 - rho)
    = [tau - rho (1 - rho^tau) / (1 - rho)] / (1 - rho); tau when rho = 0."""
    if momentum == 0:
        return float(steps)
    rho = momentum
    return (steps - rho * (1 - rho**steps) / (1 - rho)) / (1 - rho)


def normalized_average(global_state: dict[str, torch.Tensor], states: Sequence[dict[str, torch.Tensor]],
                       weights: Sequence[float], norms: Sequence[float], keys: Sequence[str]) -> dict[str, torch.Tensor]:
    """FedNova (Wang et al. 2020, Eq. 7): with p_k = n_k / n and a_k = ||a_k||_1,
    w <- w - tau_eff * sum_k p_k (w - w_k) / a_k, tau_eff = sum_k p_k a_k, for the
    entries in ``keys``; the other entries (BatchNorm statistics) are the plain average.
    With equal a_k this is exactly FedAvg.

    A client that took no step (a_k = 0: too few samples for one batch) returns w itself, so
    its term p_k (w - w_k) / a_k is 0/0; it is taken as 0, the limit of a vanishing update,
    and its a_k = 0 still enters tau_eff. The paper's algorithm assumes tau_k >= 1, and the
    released code (NIID-Bench) would divide by zero. No step anywhere leaves w unchanged."""
    normalized = set(keys)
    out = weighted_average([{k: v for k, v in st.items() if k not in normalized} for st in states], weights)
    p = torch.tensor([float(x) for x in weights], dtype=torch.float64)
    p = p / p.sum()
    a = torch.tensor([float(x) for x in norms], dtype=torch.float64)
    if (a < 0).any():
        raise ValueError("FedNova: a negative number of local steps")
    tau_eff = float((p * a).sum())
    for key in keys:
        w = global_state[key].to(torch.float64)
        d = torch.zeros_like(w)
        for pk, ak, s in zip(p.tolist(), a.tolist(), states):
            if ak > 0:
                d += (pk / ak) * (w - s[key].to(torch.float64))
        out[key] = (w - tau_eff * d).to(global_state[key].dtype)
    return {k: out[k] for k in states[0]}  # the state-dict order
