"""``collapse-lab cka`` and ``collapse-lab nc`` (``analysis.similarity_view``): options,
checks and printing."""
from __future__ import annotations

import json

import click

from .common import progress_callback
from .selection import warn
from .options import analysis_options, rounds_option


@click.command("cka")
@analysis_options
@rounds_option("CKA(client, global) over those rounds too.")
def cka_cmd(alpha, runs, store, dataset, model, methods, regs, round_, client, tau, split, feature_dtype, device,
            fig_dir, as_json, rounds_spec, data_root=None, model_factory=None, layer=None):
    """Linear CKA (unbiased HSIC) between the representations of the global model and of every
    client stored at a round: a models x models heatmap per run; with --rounds also CKA between
    each client and the global model over the rounds."""
    from ..actions.similarity import cka

    given = click.get_current_context().get_parameter_source("client") == click.core.ParameterSource.COMMANDLINE
    out = cka(store, alpha=alpha, runs=runs, dataset=dataset, model=model, methods=methods, regs=regs, round=round_,
              client=client if given else None, tau=tau, split=split, feature_dtype=feature_dtype, device=device, out=fig_dir,
              rounds=rounds_spec, data_root=data_root, model_factory=model_factory, layer=layer,
              progress=progress_callback("cka"), warn=warn)["cka"]
    if as_json:
        click.echo(json.dumps({"cka": out}, indent=1))
        return
    for rec in out:
        mean = sum(rec["cka_with_global"].values()) / len(rec["cka_with_global"])
        click.echo(f"{rec['run']} round {rec['round']}: CKA(client, global) mean {mean:.4f}, "
                   + ", ".join(f"{k.split()[1]}: {v:.3f}" for k, v in rec["cka_with_global"].items()))
        click.echo("figures: " + ", ".join(rec["figures"]))


@click.command("nc")
@analysis_options
@rounds_option("the metrics over those rounds.")
def nc_cmd(alpha, runs, store, dataset, model, methods, regs, round_, client, tau, split, feature_dtype, device,
           fig_dir, as_json, rounds_spec, data_root=None, model_factory=None, layer=None):
    """NC1 (within-class variability relative to between-class), NC2 (equinorm and
    equiangularity of the class means and of the classifier rows), NC3 (self-duality) and NC4
    (agreement with the nearest class centre) of the global model and client --client
    (Papyan et al. 2020), at a round or over rounds."""
    from ..actions.similarity import nc

    got = nc(store, alpha=alpha, runs=runs, dataset=dataset, model=model, methods=methods, regs=regs, round=round_,
             client=client, tau=tau, split=split, feature_dtype=feature_dtype, device=device, out=fig_dir,
             rounds=rounds_spec, data_root=data_root, model_factory=model_factory, layer=layer,
             progress=progress_callback("nc"), warn=warn)
    rows, figures = got["neural_collapse"], got["figures"]
    if as_json:
        click.echo(json.dumps({"neural_collapse": rows, "figures": figures}, indent=1))
        return
    click.echo(f"{'run':<48} {'model':<9} {'round':>5} {'NC1':>9} {'NC2 eqn':>8} {'NC2 eqa':>8} {'NC3':>7} {'NC4':>6}")
    for e in rows:
        click.echo(f"{e['run']:<48} {e['model']:<9} {e['round']:>5} {e['nc1']:>9.4f} {e['nc2_means']['equinorm']:>8.4f} "
                   f"{e['nc2_means']['equiangular']:>8.4f} {e['nc3']:>7.4f} {e['nc4']:>6.3f}")
    if figures:
        click.echo("figures: " + ", ".join(figures))
