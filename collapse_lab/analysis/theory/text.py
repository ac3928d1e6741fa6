"""The text ``collapse-lab theory`` prints: Proposition 1's table and verdict, Theorem 1's
step study and per-alpha table, the alignment's diagonals (the same numbers as ``--json``)."""
from __future__ import annotations

import numpy as np


def prop1_lines(rows: list[dict], real: list[dict], worst: float, target: float, store) -> list[str]:
    """Per d the worst of the random correlation matrices, each real run, and the verdict."""
    out = [f"{'source':<44} {'d':>5} {'||K||_F^2 - d':>16} {'sum (l - mean)^2':>18} {'rel.err':>10}"]
    by_d: dict[int, list[dict]] = {}
    for r in rows:
        by_d.setdefault(r["d"], []).append(r)
    for d, rs in by_d.items():
        w = max(rs, key=lambda r: r["rel_error"])
        out.append(f"{'random correlation (worst of ' + str(len(rs)) + ')':<44} {d:>5} {w['lhs']:>16.8g} "
                   f"{w['rhs']:>18.8g} {w['rel_error']:>10.2e}")
    for r in real:
        out.append(f"{(r['run'][:34] + ' ' + r['model']):<44} {r['d']:>5} {r['lhs']:>16.8g} {r['rhs']:>18.8g} "
                   f"{r['rel_error']:>10.2e}")
    if not real:
        out.append(f"(no trained run in {store}: real representations skipped)")
    out.append(f"largest relative error: {worst:.2e} (target < {target:g}: {'met' if worst < target else 'NOT met'})")
    return out


def thm1_lines(out: dict) -> list[str]:
    """``analysis.theory.thm1.thm1``'s result as a step study, a table per alpha, the
    figures, the seconds and the verdict."""
    per_alpha = out["alphas"]
    lines = [f"Eq. 40 (Assumption 1 only), largest relative error over t, as the step shrinks ({out['dataset']}, "
             f"alpha={per_alpha[0]['alpha']}):"]
    lines += [f"  step {s['eta']:.3g}: {s['max_eq40_rel']:.3e}" for s in out["step_study"]]
    lines.append(f"{'alpha':>6} {'N':>5} {'classes':>7} {'growing':>8} {'rank G t0':>9} {'rank G end':>10} "
                 f"{'Eq.40 err':>10} {'Eq.46 err t0':>12} {'Eq.46 err end':>13} {'M drift':>8} {'align diag end':>14} "
                 f"{'Eq.46 err grow-k end':>20} {'Eq.40-last err grow-k end':>25} {'Eq.45 G err':>11}")
    for p in per_alpha:
        align_end = list(p["alignment_diag_mean"].values())[-1]
        lines.append(
            f"{p['alpha']:>6} {p['samples']:>5} {p['classes_present']:>7} {str(p['n_growing']) + '/' + str(p['of']):>8} "
            f"{p['G_effective_rank_t0']:>9.2f} {p['G_effective_rank_end']:>10.2f} {p['eq40_max_rel_error']:>10.2e} "
            f"{p['eq46_rel_error_first']:>12.3f} {p['eq46_rel_error_last']:>13.3f} {p['M_drift']:>8.3f} {align_end:>14.3f} "
            f"{(p['eq46_max_rel_error_growing_k_last'] if p['n_growing'] else float('nan')):>20.3f} "
            f"{(p['eq40_lastline_max_rel_error_growing_k_last'] if p['n_growing'] else float('nan')):>25.3f} "
            f"{p['G_eq45_rel_error_max']:>11.3f}")
    return lines + ["figures: " + ", ".join(str(p) for p in out["figures"]), f"{out['seconds']:.1f} s",
                    out["verdict"]["line"]]


def align_lines(results: dict, paths) -> list[str]:
    """Per alpha the mean diagonal of the alignment matrix at each time, then the figures."""
    lines = []
    for a, r in results.items():
        diag = ", ".join(f"t={float(f'{t:.3g}'):g}: {float(np.mean(np.diag(m))):.3f}" for t, m in r.alignment.items())
        lines.append(f"alpha={a}: mean diagonal |u_k^T v_(L+1),k| {diag}")
    return lines + ["figures: " + ", ".join(str(p) for p in paths)]
