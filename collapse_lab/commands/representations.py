"""``collapse-lab cka`` and ``collapse-lab nc`` (``analysis.similarity_view``): options,
checks and printing."""
from __future__ import annotations

import json
from pathlib import Path

import click

from ..errors import CollapseLabError
from .common import feature_source, progress_callback
from .selection import select_runs, warn
from .options import analysis_options
from ..analysis.stored import check_analysis_options


@click.command("cka")
@analysis_options
@click.option("--rounds", "rounds_spec", default=None, help="all, A:B or A,B,C: CKA(client, global) over rounds too.")
def cka_cmd(alpha, runs, store, dataset, model, methods, regs, round_, client, tau, split, feature_dtype, device,
            fig_dir, as_json, rounds_spec, data_root=None, model_factory=None, layer=None):
    """Linear CKA (unbiased HSIC) between the representations of the global model and of every
    client stored at a round: a models x models heatmap per run; with --rounds also CKA between
    each client and the global model over the rounds."""
    from ..analysis.similarity_view import cka

    check_analysis_options(tau, client, None)
    if click.get_current_context().get_parameter_source("client") == click.core.ParameterSource.COMMANDLINE:
        raise CollapseLabError("--client has no effect on cka: it compares the global model with every client stored "
                               "at the round; drop --client")
    selected = select_runs(Path(store), alpha, runs, dataset, model, regs, methods, one_round=True)  # each run alone
    fs = feature_source(data_root, model_factory, layer, split=split, dtype=feature_dtype, device=device)
    out = cka(selected, fs, rounds_spec, round_, fig_dir, progress_callback("cka"), warn)
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
@click.option("--rounds", "rounds_spec", default=None, help="all, A:B or A,B,C: the metrics over rounds.")
def nc_cmd(alpha, runs, store, dataset, model, methods, regs, round_, client, tau, split, feature_dtype, device,
           fig_dir, as_json, rounds_spec, data_root=None, model_factory=None, layer=None):
    """NC1 (within-class variability relative to between-class), NC2 (equinorm and
    equiangularity of the class means and of the classifier rows), NC3 (self-duality) and NC4
    (agreement with the nearest class centre) of the global model and client --client
    (Papyan et al. 2020), at a round or over rounds."""
    from ..analysis.similarity_view import nc

    check_analysis_options(tau, client, None)
    selected = select_runs(Path(store), alpha, runs, dataset, model, regs, methods, one_round=True)  # each run alone
    fs = feature_source(data_root, model_factory, layer, split=split, dtype=feature_dtype, device=device)
    rows, figures = nc(selected, fs, rounds_spec, round_, client, fig_dir, progress_callback("nc"), warn)
    if as_json:
        click.echo(json.dumps({"neural_collapse": rows, "figures": figures}, indent=1))
        return
    click.echo(f"{'run':<48} {'model':<9} {'round':>5} {'NC1':>9} {'NC2 eqn':>8} {'NC2 eqa':>8} {'NC3':>7} {'NC4':>6}")
    for e in rows:
        click.echo(f"{e['run']:<48} {e['model']:<9} {e['round']:>5} {e['nc1']:>9.4f} {e['nc2_means']['equinorm']:>8.4f} "
                   f"{e['nc2_means']['equiangular']:>8.4f} {e['nc3']:>7.4f} {e['nc4']:>6.3f}")
    if figures:
        click.echo("figures: " + ", ".join(figures))
