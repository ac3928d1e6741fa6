"""``collapse-lab layers``: where in the network collapse starts (issue 50). For the global
and a client's model of the chosen rounds, the covariance spectrum of every block's output
on the evaluation set (``layerwise``: one float64 forward pass per model for all layers,
convolutional maps pooled per channel; cached beside the store like the representations),
with the measures of ``spectra.measures.PER_LAYER``; a layer x round heatmap of the
effective rank per run and model, and the spectra of the layers at chosen rounds."""
from __future__ import annotations

import json
from pathlib import Path

import click

from ..errors import CollapseLabError
from .common import Progress, feature_source
from ..analysis.round_choice import parse_rounds
from .selection import select_runs, warn
from .options import analysis_options
from ..analysis.stored import check_analysis_options, local_kept, model_layers


def _figures(rows: list[dict], spectra: list[dict], tau: float, split: str, meta: dict, fig_dir: Path,
             reference: dict | None = None) -> list[Path]:
    from ..analysis.plots import save_figure
    from ..analysis.plots.layers import heatmap_figure, layer_spectra_figure

    what = f"{meta['dataset']} / {meta['model']}"
    stem = f"layers_{meta['dataset']}_{meta['model']}"
    paths = save_figure(heatmap_figure(rows, "effective_rank", f"{what}: effective rank of each layer's covariance "
                                       f"({split} set)", reference), fig_dir, stem)
    if not spectra:  # --logged: training logs measures, not spectra
        return paths
    return paths + save_figure(layer_spectra_figure(spectra, tau, f"{what}: each layer's covariance spectrum "
                                                    f"({split} set)"), fig_dir, f"{stem}_spectra")


def _plan(selected, rounds_spec, round_, spectra_at) -> list[tuple]:
    """(run, round, whether its spectra are drawn) for every run and chosen round."""
    from .selection import warn

    out = []
    for run in selected:
        last = int(run.meta.get("rounds_complete", 0))
        if rounds_spec is None and round_ is None:  # where collapse starts: every kept round from the initial model
            asked = list(range(last + 1))
        else:
            asked = parse_rounds(rounds_spec or str(round_), last)
        rounds = [r for r in asked if run.has_global(r)]  # a retention setting may have pruned some
        if not rounds:
            raise CollapseLabError(f"--rounds: {run.path.name} keeps none of rounds {asked} (--keep-global); "
                                   f"it keeps {[r for r in range(last + 1) if run.has_global(r)]}")
        if len(rounds) < len(asked):
            warn(f"{run.path.name}: rounds {sorted(set(asked) - set(rounds))} were not kept (--keep-global); "
                 "skipped")
        drawn = parse_rounds(spectra_at, last) if spectra_at else sorted({rounds[0], rounds[-1]})
        if not set(drawn) <= set(rounds):
            raise CollapseLabError(f"--spectra-at {spectra_at!r}: round(s) {sorted(set(drawn) - set(rounds))} are "
                                   "not among --rounds; name rounds that are")
        out += [(run, r, r in drawn) for r in rounds]
    return out


def iid_groups(selected, group: dict) -> dict:
    """group -> the group of its IID twin (the same settings at alpha inf) among ``selected``."""
    def key(run) -> str:
        return json.dumps({k: v for k, v in run.config.identity().items() if k not in ("alpha", "seed")},
                          sort_keys=True, default=str)

    iid = {key(r): group[r.path] for r in selected if str(r.meta.get("alpha")) == "inf"}
    return {group[r.path]: iid[key(r)] for r in selected
            if str(r.meta.get("alpha")) != "inf" and key(r) in iid}


def groups(selected) -> dict:
    """run path -> its configuration's label (method, regularizer, alpha, beta: its runs differ
    only in the seed), or the run's name where two configurations would share a label."""
    from ..analysis.labels import label

    key = {r.path: r.config.seedless_key() for r in selected}
    lab = {}
    for r in selected:
        m = r.meta
        lab[key[r.path]] = label({"method": m.get("method"), "reg": m.get("reg"), "alpha": m.get("alpha"),
                                  **({"beta": m.get("beta")} if m.get("reg") not in (None, "none") else {})})
    unique = len(set(lab.values())) == len(lab)
    return {r.path: lab[key[r.path]] if unique else r.path.name for r in selected}


@click.command("layers")
@analysis_options(foreign_layer=False)
@click.option("--rounds", "rounds_spec", default=None, help="Rounds: all, A:B or A,B,C (default: every kept round from 0, the initial model; or --round).")
@click.option("--layer", "layers", multiple=True, metavar="NAME",
              help="A module of model.named_modules() (repeatable; z: the representation); default: the model's "
                   "blocks, else its activations, then z.")
@click.option("--spectra-at", default=None, metavar="ROUNDS",
              help="Rounds whose layer spectra are drawn (all, A:B or A,B,C, among --rounds; default: the first and "
                   "last of --rounds).")
@click.option("--positions", type=int, default=0, show_default=True, metavar="P",
              help="Read a convolutional map at P fixed positions, flattened (C x P values a sample), instead of "
                   "its channel means (0).")
@click.option("--logged", is_flag=True, help="Read what train --probe-layers logged each round (the probe set, the "
                                             "global model and client 0) instead of the checkpoints.")
def layers_cmd(alpha, runs, store, dataset, model, methods, regs, round_, client, tau, split, feature_dtype, device,
               fig_dir, as_json, rounds_spec, layers, spectra_at, positions, logged):
    """Effective rank, n above tau and participation ratio of every layer's covariance, for the
    global model and client --client's, at --rounds; a layer x round heatmap per run and the
    layers' spectra at --spectra-at."""
    check_analysis_options(tau, client, None)
    if any(not name.strip() for name in layers):
        raise CollapseLabError("--layer is empty; name a module of model.named_modules() (or z, the representation)")
    if round_ is not None and rounds_spec is not None:
        raise CollapseLabError("--round has no effect with --rounds (which names the rounds); drop one")
    if positions < 0 or (logged and positions):
        raise CollapseLabError(f"--positions {positions}: give P >= 1 positions (0: channel means)" if positions < 0
                               else "--positions: training logged channel means; drop --positions or --logged")
    selected = select_runs(Path(store), alpha, runs, dataset, model, regs, methods)
    if logged:
        rows, spectra, computed = _logged_rows(selected, rounds_spec, round_, client, tau, layers), [], 0
    else:
        fs = feature_source(split=split, dtype=feature_dtype, device=device)
        rows, spectra = _computed_rows(fs, selected, _plan(selected, rounds_spec, round_, spectra_at), client, layers,
                                       tau, positions)
        computed = fs.computed
    paths = _figures(rows, spectra, tau, "probe" if logged else split, selected[0].meta, Path(fig_dir),
                     iid_groups(selected, groups(selected)))
    if as_json:
        click.echo(json.dumps({"layers": rows, "tau": tau, "computed": computed,
                               "figures": [str(p) for p in paths]}, indent=1))
        return
    click.echo(f"{'run':<48} {'model':<9} {'round':>5} {'layer':<14} {'width':>6} {'n>tau':>6} {'erank':>8} {'PR':>8}")
    for e in rows:
        click.echo(f"{e['run']:<48} {e['model']:<9} {e['round']:>5} {e['layer']:<14} {e['width']:>6} "
                   f"{e['n_significant']:>6} {e['effective_rank']:>8.2f} {e['participation_ratio']:>8.2f}")
    click.echo(f"{computed} model(s) read; figures: " + ", ".join(str(p) for p in paths))


def _computed_rows(fs, selected, plan, client, layers, tau, positions) -> tuple[list[dict], list[dict]]:
    """Each planned model's rows, read from its checkpoint (cached), and the spectra drawn."""
    rows, spectra, warned, group = [], [], set(), groups(selected)
    progress = Progress("layers", len(plan))
    for run, r, drawn in plan:
        for which, k in (("global", None), (f"client_{client}", client)):
            if k is not None and (r < 1 or not local_kept(run, r, k, warn, warned)):
                continue
            base = {"run": run.path.name, "group": group[run.path], "alpha": run.meta.get("alpha"),
                    "reg": run.meta.get("reg"), "round": r, "model": which}
            got, svs = model_layers(fs, run, r, k, layers, tau, positions)
            rows += [{**base, **e} for e in got]
            spectra += [{**base, "layer": n, "sv": sv, "floor": f} for n, (sv, f) in svs.items()] if drawn else []
        progress.step(f"{run.path.name} round {r}")
    return rows, spectra


def _logged_rows(selected, rounds_spec, round_, client, tau, layers) -> list[dict]:
    """--logged: the rows ``train --probe-layers`` wrote to metrics.jsonl (the probe set, the
    global model and client 0, the probe's tau); no checkpoint is read."""
    from ..analysis.run_log import layer_rows
    from ..spectra.functional import DEFAULT_TAU

    if tau != DEFAULT_TAU or client != 0 or layers:
        raise CollapseLabError(f"--logged: training logged client 0's and the global model's default layers at tau "
                               f"{DEFAULT_TAU:g}; drop --tau, --client and --layer (or read the checkpoints without "
                               "--logged)")
    rows, group = [], groups(selected)
    for run in selected:
        logged = layer_rows(run.metrics(), run.path.name)
        if not logged:
            raise CollapseLabError(f"--logged: {run.path.name} logged no layers (train it with --probe-layers, or "
                                   "read its checkpoints without --logged)")
        last = int(run.meta.get("rounds_complete", 0))
        keep = set(parse_rounds(rounds_spec, last) if rounds_spec else [round_] if round_ is not None else range(last + 1))
        rows += [{"group": group[run.path], "alpha": run.meta.get("alpha"), "reg": run.meta.get("reg"),
                  **{k: v for k, v in e.items() if k != "run"}, "run": run.path.name}
                 for e in logged if e["round"] in keep]
    return rows


__all__ = ["layers_cmd"]
