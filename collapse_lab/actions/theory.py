"""Numerical checks of the papers' theory (``collapse-lab theory``; FedDecorr App. A, B):
Proposition 1 on random and real correlation matrices, Theorem 1 on a deep linear network,
and the Fig. 6 alignment heatmaps (``analysis.theory``)."""
from __future__ import annotations

from ..errors import CollapseLabError
from .selection import features_of, warn_stderr


def prop1(store="checkpoints", *, seed: int = 0, progress=None, warn=warn_stderr) -> dict:
    """||K||_F^2 - d = sum_i (lambda_i - mean lambda)^2 on random correlation matrices and on
    the newest run of ``store`` (its global model and client 0's): {"random", "real",
    "max_rel_error", "target"}. ``progress(label, total)``: as each size is done."""
    from ..analysis.theory.prop1 import SIZES, TARGET, check_random, check_real

    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise CollapseLabError(f"--seed must be >= 0 (got {seed})")
    rows = check_random(seed=seed, done=None if progress is None else
                        (lambda d: progress(f"random correlation matrices, d = {d}", len(SIZES))))
    real = check_real(store, features_of(), warn)
    return {"random": rows, "real": real, "max_rel_error": max(r["rel_error"] for r in rows + real), "target": TARGET}


def _settings(dataset, data_root, alpha, client, clients, depth, width, scale, eta, horizon, grow_factor, seed, out,
              progress) -> dict:
    """The options as ``analysis.theory``'s arguments, with the data root every command reads
    (``data_root``, else $COLLAPSE_LAB_DATA, else the user config's)."""
    from ..data_root import check_data_root, default_data_root

    root = default_data_root(None if data_root is None else check_data_root(data_root))[0]
    return dict(dataset=dataset, data_root=root, alphas=tuple(alpha), client=client, clients=clients, depth=depth,
                width=width, scale=scale, eta=eta, horizon=horizon, grow_factor=grow_factor, seed=seed, fig_dir=out,
                **({} if progress is None else {"done": progress}))


def thm1(*, dataset=None, data_root=None, alpha=(), client=0, clients=10, depth=2, width=32, scale=0.3, eta=2e-4,
         horizon=0.4, grow_factor=2.0, seed=0, out="figures", progress=None) -> dict:
    """Theorem 1 on an (L+1)-layer linear network (L = ``depth``, width d) trained by gradient
    descent of step ``eta`` for time ``horizon`` on client ``client``'s data: Eq. 40 and Eq.
    32/46 against the measured d sigma_k/dt, the verdict and the figures' paths."""
    from ..analysis.theory.thm1 import thm1 as run

    return run(**_settings(dataset, data_root, alpha, client, clients, depth, width, scale, eta, horizon,
                           grow_factor, seed, out, progress))


def align(*, dataset=None, data_root=None, alpha=(), client=0, clients=10, depth=2, width=32, scale=0.3, eta=2e-4,
          horizon=0.4, grow_factor=2.0, seed=0, out="figures", progress=None) -> dict:
    """The Fig. 6 heatmaps alone: per alpha the alignment of Pi's left and W_{L+1}'s right
    singular vectors over time: {"alignment": {alpha: {t: matrix}}, "figures"}."""
    from ..analysis.theory.thm1 import align as run

    results, paths = run(**_settings(dataset, data_root, alpha, client, clients, depth, width, scale, eta, horizon,
                                     grow_factor, seed, out, progress))
    return {"alignment": {a: {str(t): m.tolist() for t, m in r.alignment.items()} for a, r in results.items()},
            "figures": [str(p) for p in paths], "results": results}
