"""Theorem 1 (FedDecorr App. B) checked numerically on an (L+1)-layer linear network
trained by gradient descent on one client's data of a Dirichlet split: Eq. 40 against the
measured d sigma_k/dt as the step shrinks, Eq. 32/45/46 per alpha, and the Fig. 6 alignment
of Pi's left and W_{L+1}'s right singular vectors (``linear_flow.simulate``)."""
from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from ...config import DEFAULT_ALPHAS, alpha_str, parse_alpha
from ...errors import CollapseLabError
from ..select import no_progress


def client_data(dataset, data_root, alpha, client, clients, seed, width):
    """One client's data (x as d_in x N, labels) of the run partition's Dirichlet split of
    the data set's training set (the data and partition registries, the run seed's stream)."""
    from ...data import load_dataset
    from ...data.mnist import has_split
    from ...partition import PARTITIONS
    from ...seeds import PURPOSE_PARTITION, seed_for

    options = {}
    if dataset == "mnist":
        if data_root is None:
            raise CollapseLabError("--dataset mnist needs --data-root DIR with the idx files")
        options["test_only"] = not has_split(Path(data_root), "train")  # a copy of the test set alone will do
    ds = load_dataset(dataset, data_root=data_root, **options)
    x, y, classes = ds.to_float(ds.train_x).flatten(1), ds.train_y, ds.num_classes
    rng = np.random.default_rng(seed_for(seed, PURPOSE_PARTITION))
    part = PARTITIONS.call("dirichlet", y.numpy(), classes, clients, rng, alpha=alpha)
    ix = torch.from_numpy(part.client_indices[client])
    if width > x.shape[1]:
        raise CollapseLabError(f"--width {width} exceeds the input dimension {x.shape[1]}; use --width <= {x.shape[1]}")
    return x[ix].to(torch.float64).T.contiguous(), y[ix], classes


def check_settings(depth, width, eta, horizon, alphas, client=0, clients=1, seed=0, scale=1.0, grow_factor=2.0):
    """The simulation's settings (named by the commands' options), one line each; the alphas
    as numbers (default: the papers' four)."""
    if depth < 2:
        raise CollapseLabError(f"--depth must be >= 2 (Theorem 1 needs L >= 2 here; got {depth})")
    for name, v in (("--eta", eta), ("--horizon", horizon), ("--scale", scale), ("--grow-factor", grow_factor)):
        if not (math.isfinite(v) and v > 0):
            raise CollapseLabError(f"{name} must be a finite number > 0 (got {v})")
    for name, v in (("--width", width), ("--clients", clients)):
        if v < 1:
            raise CollapseLabError(f"{name} must be >= 1 (got {v})")
    if not 0 <= client < clients:
        raise CollapseLabError(f"--client {client} is not one of the --clients {clients} (0..{clients - 1})")
    if seed < 0:
        raise CollapseLabError(f"--seed must be >= 0 (got {seed})")
    if scale > 10:  # the product of L + 1 layers at this scale leaves float64's range within the horizon
        raise CollapseLabError(f"--scale {scale:g}: give a scale in (0, 10] (the initial singular values; the paper's "
                               "analysis starts small, 0.3 by default)")
    if horizon / eta > 2e5:
        raise CollapseLabError(f"--horizon / --eta = {horizon / eta:.0f} steps is too many; raise --eta or lower --horizon")
    return [parse_alpha(a) for a in alphas] if alphas else list(DEFAULT_ALPHAS)


def choose_dataset(dataset, data_root):
    """The data set asked for, else MNIST where the data root holds its test set, else digits."""
    if dataset:
        return dataset
    if data_root:
        from ...data.mnist import has_split

        if has_split(Path(data_root), "test"):
            return "mnist"
    return "digits"


def thm1(dataset: str | None = None, data_root=None, alphas=(), client: int = 0, clients: int = 10, depth: int = 2,
         width: int = 32, scale: float = 0.3, eta: float = 2e-4, horizon: float = 0.4, grow_factor: float = 2.0,
         seed: int = 0, fig_dir="figures", done: Callable[[str, int], None] = no_progress) -> dict:
    """Theorem 1's numbers: the step study of Eq. 40 on the first alpha's client, per alpha
    Eq. 46, growth, rank of G and alignment, the verdict, and the two figures' paths.
    ``done(label, total)`` is called after each simulation."""
    from ..plots import save_figures
    from ..plots.theory import alignment_figure, thm1_figure
    from .linear_flow import simulate

    t0 = time.time()
    alphas = check_settings(depth, width, eta, horizon, alphas, client, clients, seed, scale, grow_factor)
    dataset = choose_dataset(dataset, data_root)
    steps = max(int(round(horizon / eta)), 4)
    # (a) the Eq. 40 identity as the step shrinks, on the first alpha's client
    x, y, classes = client_data(dataset, data_root, alphas[0], client, clients, seed, width)
    studies = []
    for div in (1, 2, 4):
        res = simulate(x, y, classes, depth, width, scale, eta / div, steps * div, records=10, seed=seed)
        done(f"Eq. 40 at eta {eta / div:g}", 3 + len(alphas))
        studies.append({"eta": eta / div, "times": res.times, "eq40_rel": res.eq40_rel, "max_eq40_rel": max(res.eq40_rel)})
    # (b) per alpha: Eq. 46, growth, rank of G, alignment
    per_alpha, results = [], {}
    kmax = min(classes, width)
    for a in alphas:
        x, y, classes = client_data(dataset, data_root, a, client, clients, seed, width)
        res = simulate(x, y, classes, depth, width, scale, eta, steps, records=20, align_at=(0.0, 0.5, 1.0), seed=seed)
        results[alpha_str(a)] = res
        done(f"alpha {alpha_str(a)}", 3 + len(alphas))
        per_alpha.append(alpha_numbers(res, a, x, y, classes, kmax, grow_factor))
    fig = thm1_figure([(st["eta"], st["times"], st["eq40_rel"]) for st in studies],
                      [(p["alpha"], p["times"], p["G_rank"]) for p in per_alpha], results, kmax, eta,
                      f"Theorem 1 on a {depth + 1}-layer linear network ({dataset}, client {client}, step {eta:g})")
    paths = save_figures([(fig, f"thm1_{dataset}_L{depth}"),
                          (alignment_figure(results, depth), f"thm1_alignment_{dataset}_L{depth}")], Path(fig_dir))
    out = {"dataset": dataset, "depth": depth, "width": width, "eta": eta, "horizon": horizon, "step_study": studies,
           "alphas": per_alpha, "figures": [str(p) for p in paths], "seconds": round(time.time() - t0, 2),
           "verdict": thm1_verdict(studies)}
    return out


def align(dataset: str | None = None, data_root=None, alphas=(), client: int = 0, clients: int = 10, depth: int = 2,
          width: int = 32, scale: float = 0.3, eta: float = 2e-4, horizon: float = 0.4, grow_factor: float = 2.0,
          seed: int = 0, fig_dir="figures", done: Callable[[str, int], None] = no_progress) -> tuple[dict, list]:
    """The Fig. 6 alignment alone: per alpha the simulation's alignment matrices; the figure's paths."""
    from ..plots import save_figure
    from ..plots.theory import alignment_figure
    from .linear_flow import simulate

    alphas = check_settings(depth, width, eta, horizon, alphas, client, clients, seed, scale, grow_factor)
    dataset = choose_dataset(dataset, data_root)
    steps = max(int(round(horizon / eta)), 4)
    results = {}
    for a in alphas:
        x, y, classes = client_data(dataset, data_root, a, client, clients, seed, width)
        results[alpha_str(a)] = simulate(x, y, classes, depth, width, scale, eta, steps, records=2,
                                         align_at=(0.0, 0.25, 0.5, 1.0), seed=seed)
        done(f"alpha {alpha_str(a)}", len(alphas))
    paths = save_figure(alignment_figure(results, depth), Path(fig_dir), f"align_{dataset}_L{depth}")
    return results, paths


EQ40_TOLERANCE = 1e-2  # relative: Eq. 40 is exact for the gradient flow; gradient descent's step adds O(eta)


def thm1_verdict(studies: list[dict]) -> dict:
    """Theorem 1's identity (Eq. 40) is met when its largest relative error at the smallest
    step is under ``EQ40_TOLERANCE`` and shrinks each time the step halves (the flow is the
    limit of the steps: a discretisation error, not a wrong identity)."""
    errs = [s["max_eq40_rel"] for s in studies]
    shrinks = all(b < a for a, b in zip(errs, errs[1:]))
    met = errs[-1] < EQ40_TOLERANCE and shrinks
    line = (f"Eq. 40: largest relative error {errs[-1]:.2e} at step {studies[-1]['eta']:.3g} (tolerance "
            f"{EQ40_TOLERANCE:g}), {' -> '.join(f'{e:.2e}' for e in errs)} as the step halves "
            f"({'shrinking' if shrinks else 'NOT shrinking'}): {'met' if met else 'NOT met'}")
    return {"met": met, "tolerance": EQ40_TOLERANCE, "shrinks_with_the_step": shrinks, "line": line}


def alpha_numbers(res, a, x, y, classes: int, kmax: int, grow_factor: float) -> dict:
    """One alpha's Theorem 1 numbers: Eq. 46 and the last line of Eq. 40 on the growing
    singular values, G's effective rank, the drifts and the alignment."""
    from .linear_flow import growing

    ng = growing(res.sigma_all, kmax, grow_factor)
    return {
        "eq46_max_rel_error_growing_k_last": max(res.eq46_per_k[-1][:ng]) if ng else None,
        "eq40_lastline_max_rel_error_growing_k_last": max(res.eq40_last_per_k[-1][:ng]) if ng else None,
        "alpha": alpha_str(a), "samples": int(x.shape[1]),
        "classes_present": int((torch.bincount(y, minlength=classes) > 0).sum()),
        "n_growing": ng, "of": kmax,
        "G_effective_rank_t0": res.G_rank[0], "G_effective_rank_mean": float(np.mean(res.G_rank)),
        "G_effective_rank_end": res.G_rank[-1], "exact_residual_effective_rank_t0": res.G_exact_rank[0],
        "exact_residual_effective_rank_end": res.G_exact_rank[-1],
        "eq40_max_rel_error": max(res.eq40_rel), "eq46_rel_error_first": res.eq46_rel[0],
        "eq46_rel_error_last": res.eq46_rel[-1], "eq46_rel_error_per_k_last": res.eq46_per_k[-1],
        "eq40_rel_error_per_k_last": res.eq40_per_k[-1],
        "G_eq45_rel_error_max": max(res.G_approx_rel), "M_drift": res.M_drift, "assumption1_drift": res.balance_drift,
        "alignment_diag_mean": {str(t): float(np.mean(np.diag(m)[: min(m.shape)])) for t, m in res.alignment.items()},
        "sigma_first": res.sigma[0], "sigma_last": res.sigma[-1], "times": res.times,
        "eq40_rel": res.eq40_rel, "eq46_rel": res.eq46_rel, "G_rank": res.G_rank,
    }
