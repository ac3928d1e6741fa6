"""``collapse-lab layers``: where in the network collapse starts, per layer and round
(``analysis.layer_view``); options, checks and printing."""
from __future__ import annotations

import json
from pathlib import Path

import click

from ..errors import CollapseLabError
from .common import feature_source, progress_callback
from .selection import select_runs, warn
from .options import analysis_options
from ..analysis.stored import check_analysis_options


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
               fig_dir, as_json, rounds_spec, layers, spectra_at, positions, logged, data_root=None, model_factory=None, layer=None):
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
    from ..analysis.layer_view import collapse_by_layer

    from ..analysis.select import iid_reference

    selected = select_runs(Path(store), alpha, runs, dataset, model, regs, methods,
                           one_round=round_ is not None or rounds_spec is not None)
    iid = iid_reference(Path(store), selected, alpha, runs, dataset, model, regs, methods)
    if logged:  # a twin that logged no layers cannot be the reference of logged measures
        from ..analysis.run_log import layer_rows

        iid = [r for r in iid if layer_rows(r.metrics(), r.path.name)]
    if iid:
        click.echo(f"layers: the store's IID run(s) of the same settings read as the reference (alpha inf: {len(iid)} "
                   "run(s)); give --alpha inf yourself to choose otherwise", err=True)
    selected = selected + iid
    fs = None if logged else feature_source(data_root, model_factory, layer, split=split, dtype=feature_dtype, device=device)
    rows, computed, paths = collapse_by_layer(selected, fs, rounds_spec, round_, client, layers, tau, positions,
                                              spectra_at, split, fig_dir, logged, progress_callback("layers"), warn)
    from ..analysis.layer_view import groups, iid_groups
    from ..analysis.onset import line, summary

    onset = summary(rows, iid_groups(selected, groups(selected)))
    if as_json:
        click.echo(json.dumps({"layers": rows, "tau": tau, "computed": computed, "onset": onset,
                               "figures": [str(p) for p in paths]}, indent=1))
        return
    click.echo(f"{'run':<48} {'model':<9} {'round':>5} {'layer':<14} {'width':>6} {'n>tau':>6} {'erank':>8} {'PR':>8}")
    for e in rows:
        click.echo(f"{e['run']:<48} {e['model']:<9} {e['round']:>5} {e['layer']:<14} {e['width']:>6} "
                   f"{e['n_significant']:>6} {e['effective_rank']:>8.2f} {e['participation_ratio']:>8.2f}")
    click.echo(f"{computed} model(s) read; figures: " + ", ".join(str(p) for p in paths))
    for s in onset:
        click.echo(f"layers: {line(s)}")
    if not onset:
        click.echo("layers: no IID run of these settings in the store, so no onset is given (train --alpha inf beside "
                   "them, or name one with --run)")


__all__ = ["layers_cmd"]
