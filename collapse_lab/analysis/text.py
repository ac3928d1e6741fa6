"""The analyses' numbers as the commands print them, one function per table: what the
actions return, as lines of text (``collapse-lab spectrum``, ``compare``, ``layers``, ``cka``,
``nc``, ``runs``, ``units``), the same from Python."""
from __future__ import annotations

from ..spectra.constants import TOP


def spectrum_lines(rows: list[dict], kind: str) -> list[str]:
    """The spectra of ``spectrum`` (``kind`` spectra), their evolution over rounds (rounds) or
    the spectra training logged on its probe set (logged)."""
    if kind == "spectra":
        return [f"{'run':<48} {'model':<9} {'alpha':>6} {'round':>5} {'n>tau':>6} {'eff.rank':>9} {'dead':>5} "
                f"{'RankMe':>8} {'st.rank':>8}"] + [
            f"{e['run']:<48} {e['model']:<9} {e['alpha']:>6} {e['round']:>5} {e['n_significant']:>6} "
            f"{e['effective_rank']:>9.3f} {e.get('dead_units', '-'):>5} "
            f"{e.get('rankme', float('nan')):>8.3f} {e.get('stable_rank', float('nan')):>8.3f}" for e in rows]
    if kind == "rounds":
        return [f"{'run':<48} {'round':>5} {'n>tau g':>8} {'n>tau l':>8} {'R':>8}"] + [
            f"{e['run']:<48} {e['round']:>5} {e['n_significant_global']:>8} {e.get('n_significant_local', ''):>8} "
            f"{(format(e['R'], '.4f') if 'R' in e else ''):>8}" for e in rows]
    return [f"{'run':<48} {'round':>5} {'n>tau':>6} {'dead':>5}"] + [
        f"{e['run']:<48} {e['round']:>5} {e['n_significant_top']:>6} {e['dead_units']:>5}" for e in rows]


def compare_lines(results: list[dict]) -> list[str]:
    """Each run's gap R between its local and global spectra (journal Eq. 1)."""
    return [f"{e['run']}: round {e['round']}, client {e['client']}: R = {e['R']:.4f} over K = {e['K']} "
            f"({e['R_is']}; the figures' R is R_top over the top {TOP})" for e in results]


def layers_lines(rows: list[dict]) -> list[str]:
    """Every layer's effective rank, n above tau and participation ratio, per model and round."""
    return [f"{'run':<48} {'model':<9} {'round':>5} {'layer':<14} {'width':>6} {'n>tau':>6} {'erank':>8} {'PR':>8}"] + [
        f"{e['run']:<48} {e['model']:<9} {e['round']:>5} {e['layer']:<14} {e['width']:>6} "
        f"{e['n_significant']:>6} {e['effective_rank']:>8.2f} {e['participation_ratio']:>8.2f}" for e in rows]


def cka_lines(records: list[dict]) -> list[str]:
    """Each run's CKA between every client and the global model, and its figures."""
    out = []
    for rec in records:
        mean = sum(rec["cka_with_global"].values()) / len(rec["cka_with_global"])
        out.append(f"{rec['run']} round {rec['round']}: CKA(client, global) mean {mean:.4f}, "
                   + ", ".join(f"{k.split()[1]}: {v:.3f}" for k, v in rec["cka_with_global"].items()))
        out.append("figures: " + ", ".join(rec["figures"]))
    return out


def nc_lines(rows: list[dict]) -> list[str]:
    """NC1-NC4 of each model (Papyan et al. 2020)."""
    return [f"{'run':<48} {'model':<9} {'round':>5} {'NC1':>9} {'NC2 eqn':>8} {'NC2 eqa':>8} {'NC3':>7} {'NC4':>6}"] + [
        f"{e['run']:<48} {e['model']:<9} {e['round']:>5} {e['nc1']:>9.4f} {e['nc2_means']['equinorm']:>8.4f} "
        f"{e['nc2_means']['equiangular']:>8.4f} {e['nc3']:>7.4f} {e['nc4']:>6.3f}" for e in rows]


def runs_lines(rows: list[dict]) -> list[str]:
    """The store's runs as an aligned table (``analysis.run_rows``'s columns) and their size."""
    from .run_rows import COLUMNS, cell

    widths = {c: max(len(c), *(len(cell(r, c)) for r in rows)) for c in COLUMNS}
    return (["  ".join(c.ljust(widths[c]) for c in COLUMNS)]
            + ["  ".join(cell(r, c).ljust(widths[c]) for c in COLUMNS) for r in rows]
            + [f"{len(rows)} run(s), {sum(r['size'] for r in rows) / 1e6:.1f} MB"])


def units_lines(out: dict) -> list[str]:
    """A client's local training replayed with and without the run's regularizer, per epoch."""
    lines = [f"{out['run']}: round {out['round']}, client {out['client']} ({out['images']} images), {out['reg']} "
             f"beta {out['beta']} {out['reg_options']}; {out['units']} units"]
    g = lambda v: "-" if v is None else f"{v:.3g}"  # noqa: E731
    for label in ("with", "without"):
        lines += [f"{label} the regularizer:",
                  f"  {'epoch':>5} {'CE':>8} {'beta R':>10} {'dead':>5} {'died':>5} {'|dz| CE':>9} {'|dz| R':>9} "
                  f"{'dying CE':>9} {'dying R':>9}  layer grad norms CE / R"]
        for e in out[label]:
            if e["epoch"] == 0:
                lines.append(f"  {0:>5} {'':>8} {'':>10} {e['dead']:>5}")
                continue
            lay = ", ".join(f"{k} {v['grad_ce']:.3g}/{v['grad_reg']:.3g}" for k, v in e["layers"].items())
            lines.append(f"  {e['epoch']:>5} {e['ce']:>8.4f} {e['beta_reg']:>10.4g} {e['dead']:>5} {e['died']:>5} "
                         f"{e['z_unit_grad_ce']:>9.3g} {e['z_unit_grad_reg']:>9.3g} {g(e['dying_unit_grad_ce']):>9} "
                         f"{g(e['dying_unit_grad_reg']):>9}  {lay}")
    return lines
