"""``collapse-lab cka`` and ``collapse-lab nc`` (``analysis.similarity_view``): options,
checks and printing."""
from __future__ import annotations

import json

import click

from .common import progress_callback
from .selection import warn
from .analysis_options import analysis_options, rounds_option


@click.command("cka")
@analysis_options
@rounds_option("CKA(client, global) over those rounds too.")
def cka_cmd(alpha, runs, store, dataset, model, methods, regs, round_, client, tau, split, feature_dtype, device,
            fig_dir, as_json, over_rounds, data_root=None, model_factory=None, layer=None):
    """Linear CKA (unbiased HSIC) between the representations of the global model and of every
    client stored at a round: a models x models heatmap per run; with --over-rounds also CKA between
    each client and the global model over the rounds."""
    from ..actions.similarity import cka

    given = click.get_current_context().get_parameter_source("client") == click.core.ParameterSource.COMMANDLINE
    out = cka(store, alpha=alpha, runs=runs, dataset=dataset, model=model, methods=methods, regs=regs, round=round_,
              client=client if given else None, tau=tau, split=split, feature_dtype=feature_dtype, device=device, out=fig_dir,
              over_rounds=over_rounds, data_root=data_root, model_factory=model_factory, layer=layer,
              progress=progress_callback("cka"), warn=warn)["cka"]
    if as_json:
        click.echo(json.dumps({"cka": out}, indent=1))
        return
    from ..analysis.text import cka_lines

    for line in cka_lines(out):
        click.echo(line)


@click.command("nc")
@analysis_options
@rounds_option("the metrics over those rounds.")
def nc_cmd(alpha, runs, store, dataset, model, methods, regs, round_, client, tau, split, feature_dtype, device,
           fig_dir, as_json, over_rounds, data_root=None, model_factory=None, layer=None):
    """NC1 (within-class variability relative to between-class), NC2 (equinorm and
    equiangularity of the class means and of the classifier rows), NC3 (self-duality) and NC4
    (agreement with the nearest class centre) of the global model and client --client
    (Papyan et al. 2020), at a round or over rounds."""
    from ..actions.similarity import nc

    got = nc(store, alpha=alpha, runs=runs, dataset=dataset, model=model, methods=methods, regs=regs, round=round_,
             client=client, tau=tau, split=split, feature_dtype=feature_dtype, device=device, out=fig_dir,
             over_rounds=over_rounds, data_root=data_root, model_factory=model_factory, layer=layer,
             progress=progress_callback("nc"), warn=warn)
    rows, figures = got["neural_collapse"], got["figures"]
    if as_json:
        click.echo(json.dumps({"neural_collapse": rows, "figures": figures}, indent=1))
        return
    from ..analysis.text import nc_lines

    click.echo("\n".join(nc_lines(rows)))
    if figures:
        click.echo("figures: " + ", ".join(figures))
