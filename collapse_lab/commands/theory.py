"""``collapse-lab theory prop1 | thm1 | align``."""
from __future__ import annotations

import json
import time
from pathlib import Path

import click

import numpy as np
import torch

from .options import store_option
from ..config import DEFAULT_ALPHAS, alpha_str, parse_alpha
from ..errors import CollapseLabError
from .common import Progress, data_root_option, feature_source, given_data_root


@click.group("theory")
def theory():
    """Numerical checks of Proposition 1 and Theorem 1 (FedDecorr App. A, B)."""


@theory.command("prop1", short_help="Proposition 1 on random and real correlation matrices.")
@click.option("--seed", type=int, default=0, show_default=True)
@store_option("Run store: the newest run's final global model gives a real correlation matrix.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def prop1_cmd(ctx, seed, store, as_json):
    """||K||_F^2 - d = sum_i (lambda_i - mean lambda)^2 on random and real correlation matrices."""
    from click.core import ParameterSource

    if ctx.get_parameter_source("store") != ParameterSource.DEFAULT:  # a store named on purpose must exist
        from ..store.paths import check_store_for_reading

        check_store_for_reading(store)
    from ..linalg import correlation_matrix
    from ..store import find_runs
    from ..analysis.theory.prop1 import check_random, prop1_sides, relative_error

    if seed < 0:
        raise CollapseLabError(f"--seed must be >= 0 (got {seed})")
    from ..analysis.theory.prop1 import SIZES

    progress = Progress("theory prop1", len(SIZES))
    rows = check_random(seed=seed, done=lambda d: progress.step(f"random correlation matrices, d = {d}"))
    real = []
    from .selection import warn

    runs = [r for r in find_runs(Path(store), warn)
            if r.meta.get("rounds_complete", 0) >= 1 and r.meta.get("status") != "diverged"]
    if runs:
        run = max(runs, key=lambda r: r.meta.get("created", ""))
        rd = int(run.meta["rounds_complete"])
        fs = feature_source()
        for which, k in (("global", None), ("client_0", 0)):
            if k is not None and not run.has_client(rd, k):
                continue
            kmat = correlation_matrix(fs.features(run, rd, k))
            lhs, rhs = prop1_sides(kmat)
            real.append({"run": run.path.name, "round": rd, "model": which, "d": kmat.shape[0], "lhs": lhs, "rhs": rhs,
                         "rel_error": relative_error(lhs, rhs)})
    worst = max(r["rel_error"] for r in rows + real)
    if as_json:
        click.echo(json.dumps({"random": rows, "real": real, "max_rel_error": worst, "target": 1e-10}, indent=1))
        return
    click.echo(f"{'source':<44} {'d':>5} {'||K||_F^2 - d':>16} {'sum (l - mean)^2':>18} {'rel.err':>10}")
    by_d = {}
    for r in rows:
        by_d.setdefault(r["d"], []).append(r)
    for d, rs in by_d.items():
        w = max(rs, key=lambda r: r["rel_error"])
        click.echo(f"{'random correlation (worst of ' + str(len(rs)) + ')':<44} {d:>5} {w['lhs']:>16.8g} {w['rhs']:>18.8g} {w['rel_error']:>10.2e}")
    for r in real:
        click.echo(f"{(r['run'][:34] + ' ' + r['model']):<44} {r['d']:>5} {r['lhs']:>16.8g} {r['rhs']:>18.8g} {r['rel_error']:>10.2e}")
    if not real:
        click.echo(f"(no trained run in {store}: real representations skipped)")
    click.echo(f"largest relative error: {worst:.2e} (target < 1e-10: {'met' if worst < 1e-10 else 'NOT met'})")


def client_data(dataset, data_root, alpha, client, clients, seed, width):
    """One client's data (x as d_in x N, labels) of the run partition's Dirichlet split of
    the data set's training set (the data and partition registries, the run seed's stream)."""
    from ..data import load_dataset
    from ..data.mnist import has_split
    from ..partition import PARTITIONS
    from ..seeds import PURPOSE_PARTITION, seed_for

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


def thm_options(f):
    opts = [
        click.option("--dataset", default=None, help="digits (default), gaussian, or mnist (default when --data-root holds it)."),
        data_root_option,
        click.option("--alpha", multiple=True, help="Dirichlet alphas (default 0.01 0.05 0.25 inf)."),
        click.option("--client", type=int, default=0, show_default=True),
        click.option("--clients", type=int, default=10, show_default=True),
        click.option("--depth", type=int, default=2, show_default=True, help="L, the number of layers in Pi (>= 2)."),
        click.option("--width", type=int, default=32, show_default=True, help="Representation dimension d."),
        click.option("--scale", type=float, default=0.3, show_default=True, help="Initial singular value scale."),
        click.option("--eta", type=float, default=2e-4, show_default=True, help="Gradient-descent step (time per step)."),
        click.option("--horizon", type=float, default=0.4, show_default=True, help="Gradient-flow time simulated."),
        click.option("--grow-factor", type=float, default=2.0, show_default=True, help="sigma_k 'grows' when sigma_k(T) >= factor * sigma_k(0)."),
        click.option("--seed", type=int, default=0, show_default=True),
        click.option("--out", "fig_dir", default="figures", show_default=True, type=click.Path(file_okay=False)),
        click.option("--json", "as_json", is_flag=True),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _check(depth, width, eta, horizon, alphas, client=0, clients=1, seed=0, scale=1.0, grow_factor=2.0):
    import math

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
    if horizon / eta > 2e5:
        raise CollapseLabError(f"--horizon / --eta = {horizon / eta:.0f} steps is too many; raise --eta or lower --horizon")
    return [parse_alpha(a) for a in alphas] if alphas else list(DEFAULT_ALPHAS)


def theory_data_root() -> str | None:
    """The command's --data-root, else $COLLAPSE_LAB_DATA, else the user config's (as every
    command reads it: ``data_root.default_data_root``)."""
    from ..data_root import default_data_root

    return default_data_root(given_data_root())[0]


def _dataset(dataset, data_root):
    if dataset:
        return dataset
    if data_root:
        from ..data.mnist import has_split

        if has_split(Path(data_root), "test"):
            return "mnist"
    return "digits"


@theory.command("thm1", short_help="Theorem 1 on a deep linear network, with the Fig. 6 heatmaps.")
@thm_options
def thm1_cmd(dataset, alpha, client, clients, depth, width, scale, eta, horizon, grow_factor, seed, fig_dir,
             as_json):
    """Theorem 1 on an (L+1)-layer linear network: Eq. 40 and Eq. 32/46 against measured d sigma_k/dt."""
    from ..analysis.plots import save_figure
    from ..analysis.plots.theory import alignment_figure, thm1_figure
    from ..analysis.theory.linear_flow import simulate

    t0 = time.time()
    alphas = _check(depth, width, eta, horizon, alpha, client, clients, seed, scale, grow_factor)
    data_root = theory_data_root()
    dataset = _dataset(dataset, data_root)
    steps = max(int(round(horizon / eta)), 4)
    # (a) the Eq. 40 identity as the step shrinks, on the first alpha's client
    x, y, classes = client_data(dataset, data_root, alphas[0], client, clients, seed, width)
    studies = []
    progress = Progress("theory thm1", 3 + len(alphas))
    for div in (1, 2, 4):
        res = simulate(x, y, classes, depth, width, scale, eta / div, steps * div, records=10, seed=seed)
        progress.step(f"Eq. 40 at eta {eta / div:g}")
        studies.append({"eta": eta / div, "times": res.times, "eq40_rel": res.eq40_rel, "max_eq40_rel": max(res.eq40_rel)})
    # (b) per alpha: Eq. 46, growth, rank of G, alignment
    per_alpha, results = [], {}
    kmax = min(classes, width)
    for a in alphas:
        x, y, classes = client_data(dataset, data_root, a, client, clients, seed, width)
        res = simulate(x, y, classes, depth, width, scale, eta, steps, records=20, align_at=(0.0, 0.5, 1.0), seed=seed)
        results[alpha_str(a)] = res
        progress.step(f"alpha {alpha_str(a)}")
        per_alpha.append(_alpha_numbers(res, a, x, y, classes, kmax, grow_factor))
    fig = thm1_figure([(st["eta"], st["times"], st["eq40_rel"]) for st in studies],
                      [(p["alpha"], p["times"], p["G_rank"]) for p in per_alpha], results, kmax, eta,
                      f"Theorem 1 on a {depth + 1}-layer linear network ({dataset}, client {client}, step {eta:g})")
    paths = save_figure(fig, Path(fig_dir), f"thm1_{dataset}_L{depth}")
    fig2 = alignment_figure(results, depth)
    paths += save_figure(fig2, Path(fig_dir), f"thm1_alignment_{dataset}_L{depth}")
    out = {"dataset": dataset, "depth": depth, "width": width, "eta": eta, "horizon": horizon, "step_study": studies,
           "alphas": per_alpha, "figures": [str(p) for p in paths], "seconds": round(time.time() - t0, 2),
           "verdict": thm1_verdict(studies)}
    if as_json:
        click.echo(json.dumps(out, indent=1))
        return
    _print_thm1(studies, per_alpha, dataset, alphas[0], paths, t0)
    click.echo(out["verdict"]["line"])


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


def _alpha_numbers(res, a, x, y, classes: int, kmax: int, grow_factor: float) -> dict:
    """One alpha's Theorem 1 numbers: Eq. 46 and the last line of Eq. 40 on the growing
    singular values, G's effective rank, the drifts and the alignment."""
    from ..analysis.theory.linear_flow import growing

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


def _print_thm1(studies, per_alpha, dataset, first_alpha, paths, t0: float) -> None:
    alphas = [first_alpha]
    click.echo(f"Eq. 40 (Assumption 1 only), largest relative error over t, as the step shrinks ({dataset}, alpha={alpha_str(alphas[0])}):")
    for s in studies:
        click.echo(f"  step {s['eta']:.3g}: {s['max_eq40_rel']:.3e}")
    click.echo(f"{'alpha':>6} {'N':>5} {'classes':>7} {'growing':>8} {'rank G t0':>9} {'rank G end':>10} {'Eq.40 err':>10} {'Eq.46 err t0':>12} {'Eq.46 err end':>13} {'M drift':>8} {'align diag end':>14} {'Eq.46 err grow-k end':>20} {'Eq.40-last err grow-k end':>25} {'Eq.45 G err':>11}")
    for p in per_alpha:
        align_end = list(p["alignment_diag_mean"].values())[-1]
        click.echo(f"{p['alpha']:>6} {p['samples']:>5} {p['classes_present']:>7} {str(p['n_growing']) + '/' + str(p['of']):>8} "
                   f"{p['G_effective_rank_t0']:>9.2f} {p['G_effective_rank_end']:>10.2f} {p['eq40_max_rel_error']:>10.2e} "
                   f"{p['eq46_rel_error_first']:>12.3f} {p['eq46_rel_error_last']:>13.3f} {p['M_drift']:>8.3f} {align_end:>14.3f} "
                   f"{(p['eq46_max_rel_error_growing_k_last'] if p['n_growing'] else float('nan')):>20.3f} "
                   f"{(p['eq40_lastline_max_rel_error_growing_k_last'] if p['n_growing'] else float('nan')):>25.3f} "
                   f"{p['G_eq45_rel_error_max']:>11.3f}")
    click.echo("figures: " + ", ".join(str(p) for p in paths))
    click.echo(f"{time.time() - t0:.1f} s")


@theory.command("align", short_help="The Fig. 6 alignment heatmaps alone.")
@thm_options
def align_cmd(dataset, alpha, client, clients, depth, width, scale, eta, horizon, grow_factor, seed, fig_dir,
              as_json):
    """The Fig. 6 heatmaps alone: alignment of Pi's left and W_{L+1}'s right singular vectors."""
    from ..analysis.plots import save_figure
    from ..analysis.plots.theory import alignment_figure
    from ..analysis.theory.linear_flow import simulate

    alphas = _check(depth, width, eta, horizon, alpha, client, clients, seed, scale, grow_factor)
    data_root = theory_data_root()
    dataset = _dataset(dataset, data_root)
    steps = max(int(round(horizon / eta)), 4)
    results = {}
    progress = Progress("theory align", len(alphas))
    for a in alphas:
        x, y, classes = client_data(dataset, data_root, a, client, clients, seed, width)
        results[alpha_str(a)] = simulate(x, y, classes, depth, width, scale, eta, steps, records=2,
                                         align_at=(0.0, 0.25, 0.5, 1.0), seed=seed)
        progress.step(f"alpha {alpha_str(a)}")
    paths = save_figure(alignment_figure(results, depth), Path(fig_dir), f"align_{dataset}_L{depth}")
    if as_json:
        click.echo(json.dumps({"alignment": {a: {str(t): m.tolist() for t, m in r.alignment.items()} for a, r in results.items()},
                               "figures": [str(p) for p in paths]}, indent=1))
        return
    for a, r in results.items():
        diag = ", ".join(f"t={float(f'{t:.3g}'):g}: {float(np.mean(np.diag(m))):.3f}" for t, m in r.alignment.items())
        click.echo(f"alpha={a}: mean diagonal |u_k^T v_(L+1),k| {diag}")
    click.echo("figures: " + ", ".join(str(p) for p in paths))


__all__ = ["theory"]
