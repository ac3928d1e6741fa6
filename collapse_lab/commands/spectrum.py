"""``collapse-lab spectrum`` and ``collapse-lab compare``."""
from __future__ import annotations

import json
from pathlib import Path

import click

from .options import analysis_options, top_option
from ..errors import CollapseLabError
from .common import feature_source
from ..analysis.stored import check_analysis_options, entry, local_kept, spectrum_of
from ..spectra.constants import TOP
from ..analysis.labels import describe
from ..analysis.select import seed_groups
from .selection import kept_rounds, parse_rounds, pick_round, select_runs, warn





def print_table(rows: list[dict]) -> None:
    click.echo(f"{'run':<48} {'model':<9} {'alpha':>6} {'round':>5} {'n>tau':>6} {'eff.rank':>9} {'dead':>5} "
               f"{'RankMe':>8} {'st.rank':>8}")
    for e in rows:
        click.echo(f"{e['run']:<48} {e['model']:<9} {e['alpha']:>6} {e['round']:>5} {e['n_significant']:>6} "
                   f"{e['effective_rank']:>9.3f} {e.get('dead_units', '-'):>5} {e.get('rankme', float('nan')):>8.3f} "
                   f"{e.get('stable_rank', float('nan')):>8.3f}")


@click.command("spectrum")
@analysis_options
@click.option("--rounds", "rounds_spec", default=None, help="all, A:B or A,B,C: draw the evolution over rounds.")
@top_option()
@click.option("--live-only", is_flag=True, help="Spectra and rank measures over the live units only (dead and constant "
                                                 "units of z left out).")
@click.option("--logged", is_flag=True, help="With --rounds: the global spectra training logged on its probe set "
                                             "(no checkpoints needed).")
def spectrum_cmd(alpha, runs, store, dataset, model, methods, regs, round_, client, tau, split, feature_dtype, device, fig_dir, as_json,
                 rounds_spec, top, live_only, logged):
    """Covariance spectra of global and local models (FedDecorr Fig. 2/3), or their evolution over rounds."""
    from ..analysis.plots import save_figure
    from ..analysis.plots.style import grid
    from ..analysis.plots.spectrum import plot_spectrum

    check_analysis_options(tau, client, top)
    if live_only and rounds_spec is not None:
        raise CollapseLabError("--live-only has no effect with --rounds yet; drop one")
    if rounds_spec is not None and round_ is not None:
        raise CollapseLabError("--round has no effect with --rounds (which draws the rounds it names); drop one")
    if logged and rounds_spec is None:
        raise CollapseLabError("--logged draws spectra over rounds: give --rounds (e.g. --rounds all)")
    selected = select_runs(Path(store), alpha, runs, dataset, model, regs, methods)
    if logged:
        from .spectrum_logged import logged_rounds

        return logged_rounds(selected, rounds_spec, tau, fig_dir, as_json)
    fs = feature_source(split=split, dtype=feature_dtype, device=device)
    if rounds_spec is not None:
        return _rounds(selected, fs, rounds_spec, client, tau, top, fig_dir, as_json)
    iid = iid_reference(Path(store), selected, alpha, runs, dataset, model, regs, methods)
    if iid:
        click.echo(f"spectrum: the store's IID run(s) of the same settings drawn beside as the reference (alpha inf: "
                   f"{len(iid)} run(s)); give --alpha inf yourself to choose otherwise", err=True)
    rows, curves, agg = _spectra(selected + iid, fs, round_, client, tau, live_only)
    m = selected[0].meta
    fig, axes = grid(1, 2 if curves["local"] else 1, sharey=True)
    plot_spectrum(axes[0][0], curves["global"], TOP, tau, "(a) global model")
    if curves["local"]:
        plot_spectrum(axes[0][1], curves["local"], TOP, tau, f"(b) local model (client {client})")
    fig.suptitle(f"{m['dataset']} / {m['model']}: singular values of the representation covariance ({split} set)")
    alphas = "-".join(sorted({str(r.meta.get("alpha")) for r in selected}))
    rounds = "-".join(sorted({str(e["round"]) for e in rows}))
    paths = save_figure(fig, Path(fig_dir), f"spectrum_{m['dataset']}_{m['model']}_alpha{alphas}_r{rounds}")
    if as_json:
        click.echo(json.dumps({"spectra": rows, "seed_groups": agg, "figures": [str(p) for p in paths]}, indent=1))
    else:
        print_table(rows)
        for a in agg:
            click.echo(f"{a['label']} [{a['model']}]: mean +- std of log10 singular values over {a['n']} seeds drawn")
        click.echo("figures: " + ", ".join(str(p) for p in paths))


def iid_reference(store: Path, selected: list, alphas, run_paths, dataset, model, regs, methods) -> list:
    """A collapse figure needs its reference: where --alpha names only skewed settings, the
    store's IID runs (alpha inf) with the selected runs' other settings (seeds included)."""
    from ..analysis import select as sel
    from ..config import alpha_str, parse_alpha

    if not alphas or run_paths or any(alpha_str(parse_alpha(a)) == "inf" for a in alphas):
        return []
    try:
        iid = sel.select_runs(store, ("inf",), (), dataset, model, regs, methods, warn=lambda m: None)
    except CollapseLabError:
        return []

    def key(run) -> str:  # the settings but alpha
        ident = {k: v for k, v in run.config.identity().items() if k != "alpha"}
        return json.dumps(ident, sort_keys=True, default=str)

    want = {key(r) for r in selected}
    return [r for r in iid if key(r) in want]


def _spectra(selected, fs, round_, client: int, tau: float, live_only: bool):
    """Per run its global and client model's record (``entry``), per seed group its curves
    (mean +- std of log10 over seeds where a group has several), and those aggregates."""
    from ..analysis.plots.spectrum import Curve, alpha_colors
    from ..spectra.functional import log10_mean_std
    from ..spectra.rank import live_units

    colors = alpha_colors([r.meta.get("alpha", "inf") for r in selected])
    rows, curves, agg = [], {"global": [], "local": []}, []
    per_colour: dict[str, int] = {}  # groups sharing a colour (an alpha) get their own line style
    picks: dict = {}
    for label, members in seed_groups(selected):
        m0 = members[0].meta
        i = per_colour[m0.get("alpha", "inf")] = per_colour.get(m0.get("alpha", "inf"), -1) + 1
        style = ["-", "--", ":", "-."][i % 4]
        for which, k in (("global", None), (f"client_{client}", client)):
            got = []
            for run in members:
                r = picks.get(run.path) or pick_round(run, round_)
                if k is not None and not local_kept(run, r, k, warn):
                    continue
                r, z = _latest_features(fs, run, r, k, round_ is None)
                picks[run.path] = r  # the client's round is the global model's
                z = live_units(z) if live_only else z
                sv, floor = spectrum_of(z, fs)
                rows.append(entry(run, r, which, sv, floor, tau, z, fs.stored_state(run, r, k).get("classifier.weight")))
                got.append((sv, floor))
            if not got:
                continue
            color = colors.get(m0.get("alpha", "inf"))
            if len(got) == 1:
                curve = Curve(label, got[0][0], got[0][1], color, style)
            else:
                mean, std = log10_mean_std([g[0] for g in got], [g[1] for g in got], TOP)
                curve = Curve(label, None, 0.0, color, style, mean, std)
                agg.append({"label": label, "model": which, "n": len(got), "runs": [r.path.name for r in members],
                            "log10_mean": mean.tolist(), "log10_std": std.tolist()})
            curves["global" if k is None else "local"].append(curve)
    return rows, curves, agg


def _latest_features(fs, run, r: int, k, default: bool):
    """(round, representation); with the default round (the run's last), a round a training
    writer pruned after it was picked (``--keep-global last``) gives way to its new last."""
    try:
        return r, fs.features(run, r, k)
    except CollapseLabError:
        if not default or k is not None or run.has_global(r):
            raise
        r = pick_round(run, None)
        return r, fs.features(run, r, k)


def _rounds(selected, fs, spec, client, tau, top, fig_dir, as_json):
    from ..analysis.plots import save_figure
    from ..analysis.plots.style import grid
    from ..analysis.plots.rounds import plot_series, plot_spectra_over_rounds
    from ..spectra.functional import local_global_gap
    from ..spectra.measures import Inputs, value

    fig, axes = grid(len(selected), 3)
    out, warned = [], set()
    for row, run in zip(axes, selected):
        asked = parse_rounds(spec, int(run.meta.get("rounds_complete", 0)))
        rounds = [r for r in asked if run.has_global(r)]  # retention, or an import of some rounds
        if not rounds:
            raise CollapseLabError(f"--rounds {spec}: {run.path.name} holds none of rounds {asked}; it holds "
                                   f"{kept_rounds(run)}")
        if len(rounds) < len(asked) and spec != "all":
            warn(f"{run.path.name}: rounds {sorted(set(asked) - set(rounds))} are not held; skipped")
        svs, floors, series = [], [], {"global": ([], []), f"client {client}": ([], [])}
        gap = ([], [])
        for r in rounds:
            sg, fg = spectrum_of(fs.features(run, r, None), fs)
            svs.append(sg)
            floors.append(fg)
            series["global"][0].append(r)
            series["global"][1].append(value("n_significant", Inputs(sg, 0.0, tau)))
            rec = {"run": run.path.name, "alpha": run.meta.get("alpha"), "round": r,
                   **{f"{m}_global": value(m, Inputs(sg, fg, tau)) for m in ("n_significant", "effective_rank")}}
            if r >= 1 and local_kept(run, r, client, warn, warned):
                sl, fl = spectrum_of(fs.features(run, r, client), fs)
                series[f"client {client}"][0].append(r)
                series[f"client {client}"][1].append(value("n_significant", Inputs(sl, 0.0, tau)))
                R, K = local_global_gap(sl, sg, fl, fg, top)
                gap[0].append(r)
                gap[1].append(R)
                rec.update({f"{m}_local": value(m, Inputs(sl, fl, tau)) for m in ("n_significant", "effective_rank")},
                           R=R, K=K)
            out.append(rec)
        name = describe(run.meta)
        plot_spectra_over_rounds(row[0], rounds, svs, floors, TOP, f"{name}: global spectrum by round")
        plot_series(row[1], series, f"count above tau = {tau:g}", f"{name}: significant singular values")
        plot_series(row[2], {"R (local vs global)": gap}, "R", f"{name}: local-global gap R")
    m = selected[0].meta
    paths = save_figure(fig, Path(fig_dir), f"spectrum_rounds_{m['dataset']}_{m['model']}_{spec.replace(':', '-').replace(',', '-')}")
    if as_json:
        click.echo(json.dumps({"rounds": out, "figures": [str(p) for p in paths]}, indent=1))
    else:
        click.echo(f"{'run':<48} {'round':>5} {'n>tau g':>8} {'n>tau l':>8} {'R':>8}")
        for e in out:
            nl = e.get("n_significant_local", "")
            rv = f"{e['R']:.4f}" if "R" in e else ""
            click.echo(f"{e['run']:<48} {e['round']:>5} {e['n_significant_global']:>8} {nl:>8} {rv:>8}")
        click.echo("figures: " + ", ".join(str(p) for p in paths))


@click.command("compare")
@analysis_options
@top_option()
def compare_cmd(alpha, runs, store, dataset, model, methods, regs, round_, client, tau, split, feature_dtype, device, fig_dir, as_json, top):
    """Local vs global spectrum of one run with the gap R (journal Eq. 1, Fig. 4/6)."""
    from ..analysis.plots import save_figure
    from ..analysis.plots.style import panels
    from ..analysis.plots.spectrum import Curve, plot_compare
    from ..spectra.functional import local_global_gap
    from ..spectra.measures import Inputs, value

    check_analysis_options(tau, client, top)
    selected = select_runs(Path(store), alpha, runs, dataset, model, regs, methods)
    fs = feature_source(split=split, dtype=feature_dtype, device=device)
    results = []
    fig, axes = panels(len(selected))
    for ax, run in zip(axes, selected):
        r = pick_round(run, round_)
        if not run.has_client(r, client):
            raise CollapseLabError(f"compare needs a local model: {run.path.name} keeps no client {client} checkpoint "
                                   f"for round {r}; use spectrum (global only) or another --round/--client")
        sg, fg = spectrum_of(fs.features(run, r, None), fs)
        sl, fl = spectrum_of(fs.features(run, r, client), fs)
        R, K = local_global_gap(sl, sg, fl, fg, top)
        results.append({"run": run.path.name, "alpha": run.meta.get("alpha"), "reg": run.meta.get("reg"), "round": r,
                        "client": client, "R": R, "K": K, "R_is": "R_top" if top is not None else "R_floor",
                        "n_significant_local": value("n_significant", Inputs(sl, fl, tau)),
                        "n_significant_global": value("n_significant", Inputs(sg, fg, tau))})
        plot_compare(ax, Curve(f"local (client {client})", sl, fl, "tab:orange"), Curve("global", sg, fg, "tab:blue"),
                     R, K, TOP, describe(run.meta))
    m = selected[0].meta
    alphas = "-".join(sorted({str(r.meta.get("alpha")) for r in selected}))
    paths = save_figure(fig, Path(fig_dir), f"compare_{m['dataset']}_{m['model']}_alpha{alphas}")
    if as_json:
        click.echo(json.dumps({"compare": results, "figures": [str(p) for p in paths]}, indent=1))
    else:
        for e in results:
            click.echo(f"{e['run']}: round {e['round']}, client {e['client']}: R = {e['R']:.4f} over K = {e['K']} "
                       f"({e['R_is']}; the figures' R is R_top over the top {TOP})")
        click.echo("figures: " + ", ".join(str(p) for p in paths))


__all__ = ["spectrum_cmd", "compare_cmd"]
