"""The spectrum and compare analyses (FedDecorr Fig. 2/3; journal Eq. 1, Fig. 4/6) as
functions of selected runs: per model its measures, per seed group its curve, the figure
saved; the commands only parse, call and print."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..errors import CollapseLabError
from ..spectra.constants import TOP
from ..labels import describe
from .round_choice import pick_round
from .select import quiet, seed_groups
from .stored import check_runs, entry, local_kept, spectrum_of


def spectra(selected, fs, round_: int | None, client: int, tau: float, live_only: bool = False,
            warn: Callable[[str], None] = quiet):
    """Per run its global and client model's record (``stored.entry``), per seed group its
    curves (mean +- std of log10 over seeds where a group has several), and those aggregates."""
    from ..spectra.functional import log10_mean_std
    from ..spectra.rank import live_units
    from .plots.spectrum import Curve, alpha_colors

    check_runs(selected, fs, client)
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
                r, z = latest_features(fs, run, r, k, round_ is None)
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


def latest_features(fs, run, r: int, k, default: bool):
    """(round, representation); with the default round (the run's last), a round a training
    writer pruned after it was picked (``--keep-global last``) gives way to its new last."""
    try:
        return r, fs.features(run, r, k)
    except CollapseLabError:
        if not default or k is not None or run.has_global(r):
            raise
        r = pick_round(run, None)
        return r, fs.features(run, r, k)


def draw_spectra(selected, rows, curves, tau: float, client: int, split: str, fig_dir) -> list[Path]:
    """The spectrum figure: (a) the global models' curves, (b) client ``client``'s where kept."""
    from .plots import save_figure
    from .plots.spectrum import plot_spectrum
    from .plots.style import grid

    m = selected[0].meta
    fig, axes = grid(1, 2 if curves["local"] else 1, sharey=True)
    plot_spectrum(axes[0][0], curves["global"], TOP, tau, "(a) global model")
    if curves["local"]:
        plot_spectrum(axes[0][1], curves["local"], TOP, tau, f"(b) local model (client {client})")
    fig.suptitle(f"{m['dataset']} / {m['model']}: singular values of the representation covariance ({split} set)")
    alphas = "-".join(sorted({str(r.meta.get("alpha")) for r in selected}))
    rounds = "-".join(sorted({str(e["round"]) for e in rows}))
    return save_figure(fig, Path(fig_dir), f"spectrum_{m['dataset']}_{m['model']}_alpha{alphas}_r{rounds}")


def compare(selected, fs, round_: int | None, client: int, tau: float, top: int | None, fig_dir) -> tuple[list, list]:
    """Per run the local vs global spectrum of one round with the gap R (journal Eq. 1) over
    the top ``top`` values (R_top) or down to the numerical floor (R_floor); the figure's paths."""
    from ..spectra.functional import local_global_gap
    from ..spectra.measures import Inputs, value
    from .plots import save_figure
    from .plots.spectrum import Curve, plot_compare
    from .plots.style import panels

    check_runs(selected, fs, client)
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
    return results, save_figure(fig, Path(fig_dir), f"compare_{m['dataset']}_{m['model']}_alpha{alphas}")
