"""``collapse-lab layers``: where in the network collapse starts, per layer and round
(``analysis.layer_view``); options, checks and printing."""
from __future__ import annotations

import json

import click

from .common import progress_callback
from .selection import warn
from .analysis_options import analysis_options, rounds_option


@click.command("layers")
@analysis_options(foreign_layer=False)
@rounds_option("default: every kept round from 0, the initial model; or --round.")
@click.option("--layer", "layers", multiple=True, metavar="NAME",
              help="A module of model.named_modules() (repeatable; z: the representation); default: the model's "
                   "blocks, else its activations, then z.")
@click.option("--spectra-at", default=None, metavar="ROUNDS",
              help="Rounds whose layer spectra are drawn (all, A:B or A,B,C, among --over-rounds; default: the first and "
                   "last of --over-rounds).")
@click.option("--positions", type=int, default=0, show_default=True, metavar="P",
              help="Read a convolutional map at P fixed positions, flattened (C x P values a sample), instead of "
                   "its channel means (0).")
@click.option("--logged", is_flag=True, help="Read what train --probe-layers logged each round (the probe set, the "
                                             "global model and client 0) instead of the checkpoints.")
def layers_cmd(alpha, runs, store, dataset, model, methods, regs, round_, client, tau, split, feature_dtype, device,
               fig_dir, as_json, over_rounds, layers, spectra_at, positions, logged, data_root=None, model_factory=None, layer=None):
    """Effective rank, n above tau and participation ratio of every layer's covariance, for the
    global model and client --client's, at --over-rounds; a layer x round heatmap per run and the
    layers' spectra at --spectra-at."""
    from ..actions.layers import layers as layer_action
    from ..analysis.onset import line

    got = layer_action(store, alpha=alpha, runs=runs, dataset=dataset, model=model, methods=methods, regs=regs,
                       round=round_, client=client, tau=tau, split=split, feature_dtype=feature_dtype, device=device,
                       out=fig_dir, over_rounds=over_rounds, layers=layers, spectra_at=spectra_at, positions=positions,
                       logged=logged, data_root=data_root, model_factory=model_factory,
                       progress=progress_callback("layers"), say=lambda m: click.echo(m, err=True), warn=warn)
    rows, computed, onset, paths = got["layers"], got["computed"], got["onset"], got["figures"]
    if as_json:
        click.echo(json.dumps(got, indent=1))
        return
    from ..analysis.text import layers_lines

    click.echo("\n".join(layers_lines(rows)))
    click.echo(f"{computed} model(s) read; figures: " + ", ".join(str(p) for p in paths))
    for s in onset:
        click.echo(f"layers: {line(s)}")
    if not onset:
        click.echo("layers: no IID run of these settings in the store, so no onset is given (train --alpha inf beside "
                   "them, or name one with --run)")


__all__ = ["layers_cmd"]
