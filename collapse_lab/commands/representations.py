"""``collapse-lab cka`` and ``collapse-lab nc``: how the representations of the global model
and the clients relate (linear CKA, ``spectra.cka``) and how far they have collapsed onto
their class means (NC1-NC4, ``spectra.neural_collapse``), at a round or over rounds."""
from __future__ import annotations

import json
from pathlib import Path

import click

from ..errors import CollapseLabError
from ..spectra.cka import cka_matrix
from ..spectra.neural_collapse import neural_collapse
from .common import Progress, feature_source
from ..analysis.round_choice import parse_rounds, pick_round
from .selection import select_runs, warn
from .options import analysis_options
from ..analysis.stored import check_analysis_options, local_kept


def _rounds(run, spec: str | None, round_: int | None) -> list[int]:
    if spec is not None and round_ is not None:
        raise CollapseLabError("--round has no effect with --rounds (which names the rounds); drop one")
    return parse_rounds(spec, int(run.meta.get("rounds_complete", 0))) if spec else [pick_round(run, round_)]


@click.command("cka")
@analysis_options
@click.option("--rounds", "rounds_spec", default=None, help="all, A:B or A,B,C: CKA(client, global) over rounds too.")
def cka_cmd(alpha, runs, store, dataset, model, methods, regs, round_, client, tau, split, feature_dtype, device,
            fig_dir, as_json, rounds_spec):
    """Linear CKA (unbiased HSIC) between the representations of the global model and of every
    client stored at a round: a models x models heatmap per run; with --rounds also CKA between
    each client and the global model over the rounds."""
    from ..analysis.plots import save_figure
    from ..analysis.plots.style import grid
    from ..analysis.plots.rounds import plot_series
    from ..analysis.plots.similarity import plot_matrix

    check_analysis_options(tau, client, None)
    if click.get_current_context().get_parameter_source("client") == click.core.ParameterSource.COMMANDLINE:
        raise CollapseLabError("--client has no effect on cka: it compares the global model with every client stored "
                               "at the round; drop --client")
    selected = select_runs(Path(store), alpha, runs, dataset, model, regs, methods)
    fs = feature_source(split=split, dtype=feature_dtype, device=device)
    out = []
    plans = [_rounds(run, rounds_spec, round_) for run in selected]  # bad --rounds: one line before any work
    progress = Progress("cka", len(selected))
    for run, rounds in zip(selected, plans):
        progress.step(run.path.name)
        last = rounds[-1]
        clients = run.clients_at(last)
        if not clients:
            click.echo(f"warning: {run.path.name} keeps no client checkpoint of round {last}; CKA needs them "
                       f"(--keep-local)", err=True)
            continue
        reps = [fs.features(run, last, None)] + [fs.features(run, last, k) for k in clients]
        labels = ["global"] + [f"client {k}" for k in clients]
        m = cka_matrix(reps)
        rec = {"run": run.path.name, "round": last, "models": labels, "cka": m.tolist(),
               "cka_with_global": dict(zip(labels[1:], m[0, 1:].tolist()))}
        if len(rounds) > 1:
            series: dict[str, tuple[list[int], list[float]]] = {}
            for r in rounds:
                g = fs.features(run, r, None)
                for k in run.clients_at(r):
                    v = float(cka_matrix([g, fs.features(run, r, k)])[0, 1])
                    series.setdefault(f"client {k}", ([], []))[0].append(r)
                    series[f"client {k}"][1].append(v)
            rec["over_rounds"] = {k: {"rounds": x, "cka_with_global": y} for k, (x, y) in series.items()}
        out.append(rec)
        fig, axes = grid(1, 2 if len(rounds) > 1 else 1)
        # the colour scale starts at the smallest value (to 0.05): near-1 matrices keep their structure
        low = max(0.0, float(int(min(m.min().item(), 0.95) * 20)) / 20)
        plot_matrix(axes[0][0], m.numpy(), labels, f"linear CKA, round {last}", vmin=low)
        if len(rounds) > 1:
            plot_series(axes[0][1], series, "CKA with the global model", "clients vs global over rounds")
        fig.suptitle(run.path.name, fontsize=8)
        rec["figures"] = [str(p) for p in save_figure(fig, Path(fig_dir), f"cka_{run.path.name}_r{last}")]
    if not out:
        raise CollapseLabError("no run keeps client checkpoints at the rounds asked; train with --keep-local all")
    if as_json:
        click.echo(json.dumps({"cka": out}, indent=1))
        return
    for rec in out:
        mean = sum(rec["cka_with_global"].values()) / len(rec["cka_with_global"])
        click.echo(f"{rec['run']} round {rec['round']}: CKA(client, global) mean {mean:.4f}, "
                   + ", ".join(f"{k.split()[1]}: {v:.3f}" for k, v in rec["cka_with_global"].items()))
        click.echo("figures: " + ", ".join(rec["figures"]))


def nc_check(fs, run, rounds) -> None:
    """What ``nc`` needs of a run, checked before any work is shown: each round's global
    checkpoint, and a classifier (``classifier.weight``) to measure NC2-NC4 against."""
    for r in rounds:
        fs.check_stored(run, r, None)
    if rounds and "classifier.weight" not in fs.stored_state(run, rounds[0], None):
        raise CollapseLabError(f"{run.path.name}: its checkpoints have no classifier.weight, which NC2-NC4 measure "
                               "against; nc reads collapse-lab's models (use spectrum or cka for this run)")


def nc_record(fs, run, r, k) -> dict:
    ds, _ = fs.dataset(run.config)
    y = getattr(ds, f"{fs.split}_y")
    state = fs.stored_state(run, r, k)
    out = neural_collapse(fs.features(run, r, k), y, state["classifier.weight"], state.get("classifier.bias"))
    return {"run": run.path.name, "round": r, "model": "global" if k is None else f"client_{k}", **out}


@click.command("nc")
@analysis_options
@click.option("--rounds", "rounds_spec", default=None, help="all, A:B or A,B,C: the metrics over rounds.")
def nc_cmd(alpha, runs, store, dataset, model, methods, regs, round_, client, tau, split, feature_dtype, device,
           fig_dir, as_json, rounds_spec):
    """NC1 (within-class variability relative to between-class), NC2 (equinorm and
    equiangularity of the class means and of the classifier rows), NC3 (self-duality) and NC4
    (agreement with the nearest class centre) of the global model and client --client
    (Papyan et al. 2020), at a round or over rounds."""
    from ..analysis.plots import save_figure
    from ..analysis.plots.style import grid
    from ..analysis.plots.rounds import plot_series

    check_analysis_options(tau, client, None)
    selected = select_runs(Path(store), alpha, runs, dataset, model, regs, methods)
    fs = feature_source(split=split, dtype=feature_dtype, device=device)
    rows, warned = [], set()
    plans = [_rounds(run, rounds_spec, round_) for run in selected]  # bad --rounds: one line before any work
    for run, rounds in zip(selected, plans):
        nc_check(fs, run, rounds)
    progress = Progress("nc", len(selected))
    for run, rounds in zip(selected, plans):
        progress.step(run.path.name)
        for r in rounds:
            rows.append(nc_record(fs, run, r, None))
            if local_kept(run, r, client, warn, warned):
                rows.append(nc_record(fs, run, r, client))
    figures = []
    if rounds_spec:
        fig, (axes,) = grid(1, 3)
        for ax, key, label in zip(axes, ("nc1", "nc3", "nc4"), ("NC1", "NC3", "NC4")):
            series = {}
            for e in rows:
                s = series.setdefault(f"{e['run'][:40]} {e['model']}", ([], []))
                s[0].append(e["round"])
                s[1].append(e[key])
            plot_series(ax, series, label, f"{label} over rounds")
        axes[0].set_yscale("log")
        figures = [str(p) for p in save_figure(fig, Path(fig_dir), f"nc_{selected[0].path.name}_over_rounds")]
    if as_json:
        click.echo(json.dumps({"neural_collapse": rows, "figures": figures}, indent=1))
        return
    click.echo(f"{'run':<48} {'model':<9} {'round':>5} {'NC1':>9} {'NC2 eqn':>8} {'NC2 eqa':>8} {'NC3':>7} {'NC4':>6}")
    for e in rows:
        click.echo(f"{e['run']:<48} {e['model']:<9} {e['round']:>5} {e['nc1']:>9.4f} {e['nc2_means']['equinorm']:>8.4f} "
                   f"{e['nc2_means']['equiangular']:>8.4f} {e['nc3']:>7.4f} {e['nc4']:>6.3f}")
    if figures:
        click.echo("figures: " + ", ".join(figures))
