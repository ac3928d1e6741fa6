"""``collapse-lab spectrum`` and ``collapse-lab compare``: options, checks and printing over
``analysis.spectrum_view`` and ``analysis.spectrum_rounds``."""
from __future__ import annotations

import json
from pathlib import Path

import click

from .options import analysis_options, top_option
from ..errors import CollapseLabError
from .common import feature_source
from ..analysis.stored import check_analysis_options
from ..spectra.constants import TOP
from .selection import select_runs, warn


def _table(rows: list[dict], kind: str) -> None:
    if kind == "spectra":
        click.echo(f"{'run':<48} {'model':<9} {'alpha':>6} {'round':>5} {'n>tau':>6} {'eff.rank':>9} {'dead':>5} "
                   f"{'RankMe':>8} {'st.rank':>8}")
        for e in rows:
            click.echo(f"{e['run']:<48} {e['model']:<9} {e['alpha']:>6} {e['round']:>5} {e['n_significant']:>6} "
                       f"{e['effective_rank']:>9.3f} {e.get('dead_units', '-'):>5} "
                       f"{e.get('rankme', float('nan')):>8.3f} {e.get('stable_rank', float('nan')):>8.3f}")
    elif kind == "rounds":
        click.echo(f"{'run':<48} {'round':>5} {'n>tau g':>8} {'n>tau l':>8} {'R':>8}")
        for e in rows:
            rv = f"{e['R']:.4f}" if "R" in e else ""
            click.echo(f"{e['run']:<48} {e['round']:>5} {e['n_significant_global']:>8} "
                       f"{e.get('n_significant_local', ''):>8} {rv:>8}")
    else:  # logged
        click.echo(f"{'run':<48} {'round':>5} {'n>tau':>6} {'dead':>5}")
        for e in rows:
            click.echo(f"{e['run']:<48} {e['round']:>5} {e['n_significant_top']:>6} {e['dead_units']:>5}")


def _print(key: str, kind: str, rows: list[dict], paths, as_json: bool, notes=(), **extra) -> None:
    """rows as JSON (under ``key``, with ``extra`` and the figures' paths), or as a table with
    ``notes`` and the figures' paths after it."""
    if as_json:
        click.echo(json.dumps({key: rows, **extra, "figures": [str(p) for p in paths]}, indent=1))
        return
    _table(rows, kind)
    for line in notes:
        click.echo(line)
    click.echo("figures: " + ", ".join(str(p) for p in paths))


@click.command("spectrum")
@analysis_options
@click.option("--rounds", "rounds_spec", default=None, help="all, A:B or A,B,C: draw the evolution over rounds.")
@top_option()
@click.option("--live-only", is_flag=True, help="Spectra and rank measures over the live units only (dead and constant "
                                                 "units of z left out).")
@click.option("--logged", is_flag=True, help="With --rounds: the global spectra training logged on its probe set "
                                             "(no checkpoints needed).")
def spectrum_cmd(alpha, runs, store, dataset, model, methods, regs, round_, client, tau, split, feature_dtype, device, fig_dir, as_json,
                 rounds_spec, top, live_only, logged, data_root=None, model_factory=None, layer=None):
    """Covariance spectra of global and local models (FedDecorr Fig. 2/3), or their evolution over rounds."""
    from ..analysis import spectrum_rounds, spectrum_view
    from ..analysis.select import iid_reference

    check_analysis_options(tau, client, top)
    if live_only and rounds_spec is not None:
        raise CollapseLabError("--live-only has no effect with --rounds yet; drop one")
    if rounds_spec is not None and round_ is not None:
        raise CollapseLabError("--round has no effect with --rounds (which draws the rounds it names); drop one")
    if logged and rounds_spec is None:
        raise CollapseLabError("--logged draws spectra over rounds: give --rounds (e.g. --rounds all)")
    selected = select_runs(Path(store), alpha, runs, dataset, model, regs, methods,
                           one_round=round_ is not None or rounds_spec is not None)
    if logged:
        rows, paths = spectrum_rounds.logged_over_rounds(selected, rounds_spec, tau, fig_dir)
        return _print("rounds", "logged", rows, paths, as_json)
    fs = feature_source(data_root, model_factory, layer, split=split, dtype=feature_dtype, device=device)
    if rounds_spec is not None:
        rows, paths = spectrum_rounds.over_rounds(selected, fs, rounds_spec, client, tau, top, fig_dir, warn)
        return _print("rounds", "rounds", rows, paths, as_json)
    iid = iid_reference(Path(store), selected, alpha, runs, dataset, model, regs, methods)
    if iid:
        click.echo(f"spectrum: the store's IID run(s) of the same settings drawn beside as the reference (alpha inf: "
                   f"{len(iid)} run(s)); give --alpha inf yourself to choose otherwise", err=True)
    rows, curves, agg = spectrum_view.spectra(selected + iid, fs, round_, client, tau, live_only, warn)
    paths = spectrum_view.draw_spectra(selected, rows, curves, tau, client, split, fig_dir)
    notes = [f"{a['label']} [{a['model']}]: mean +- std of log10 singular values over {a['n']} seeds drawn" for a in agg]
    _print("spectra", "spectra", rows, paths, as_json, notes, seed_groups=agg)


@click.command("compare")
@analysis_options
@top_option()
def compare_cmd(alpha, runs, store, dataset, model, methods, regs, round_, client, tau, split, feature_dtype, device, fig_dir, as_json, top, data_root=None, model_factory=None, layer=None):
    """Local vs global spectrum of one run with the gap R (journal Eq. 1, Fig. 4/6)."""
    from ..analysis.spectrum_view import compare

    check_analysis_options(tau, client, top)
    selected = select_runs(Path(store), alpha, runs, dataset, model, regs, methods, one_round=True)  # each run alone
    fs = feature_source(data_root, model_factory, layer, split=split, dtype=feature_dtype, device=device)
    results, paths = compare(selected, fs, round_, client, tau, top, fig_dir)
    if as_json:
        click.echo(json.dumps({"compare": results, "figures": [str(p) for p in paths]}, indent=1))
        return
    for e in results:
        click.echo(f"{e['run']}: round {e['round']}, client {e['client']}: R = {e['R']:.4f} over K = {e['K']} "
                   f"({e['R_is']}; the figures' R is R_top over the top {TOP})")
    click.echo("figures: " + ", ".join(str(p) for p in paths))


__all__ = ["spectrum_cmd", "compare_cmd"]
