"""``collapse-lab theory prop1 | thm1 | align``: options and printing over
``analysis.theory`` (Proposition 1 and Theorem 1, FedDecorr App. A, B)."""
from __future__ import annotations

import json

import click

from .options import figure_out_option, json_option, store_option
from .common import data_root_option, progress_callback


@click.group("theory")
def theory():
    """Numerical checks of Proposition 1 and Theorem 1 (FedDecorr App. A, B)."""


# the random draws of a check (matrices, initial weights, data order), for prop1 and the theorem's checks
seed_option = click.option("--seed", type=int, default=0, show_default=True, help="Seed of the check's random draws.")


@theory.command("prop1", short_help="Proposition 1 on random and real correlation matrices.")
@seed_option
@store_option("Run store: the newest run's final global model gives a real correlation matrix.")
@json_option
@click.pass_context
def prop1_cmd(ctx, seed, store, as_json):
    """||K||_F^2 - d = sum_i (lambda_i - mean lambda)^2 on random and real correlation matrices."""
    from click.core import ParameterSource

    from ..actions.theory import prop1
    from .selection import warn

    if ctx.get_parameter_source("store") != ParameterSource.DEFAULT:  # a store named on purpose must exist
        from ..store.paths import check_store_for_reading

        check_store_for_reading(store)
    got = prop1(store, seed=seed, progress=progress_callback("theory prop1"), warn=warn)
    if as_json:
        click.echo(json.dumps(got, indent=1))
        return
    from ..analysis.theory.text import prop1_lines

    click.echo("\n".join(prop1_lines(got["random"], got["real"], got["max_rel_error"], got["target"], store)))


def thm_options(f):
    opts = [
        click.option("--dataset", default=None, help="digits (default), gaussian, or mnist (default when --data-root holds it)."),
        data_root_option,
        click.option("--alpha", multiple=True, help="Dirichlet alphas (default 0.01 0.05 0.25 inf)."),
        click.option("--client", type=int, default=0, show_default=True),
        click.option("--clients", type=int, default=10, show_default=True),
        click.option("--depth", type=int, default=2, show_default=True, help="L, the number of layers in Pi (>= 2)."),
        click.option("--width", type=int, default=32, show_default=True, help="Representation dimension d."),
        click.option("--scale", type=float, default=0.3, show_default=True, help="Initial singular value scale."),
        click.option("--eta", type=float, default=2e-4, show_default=True, help="Gradient-descent step (time per step)."),
        click.option("--horizon", type=float, default=0.4, show_default=True, help="Gradient-flow time simulated."),
        click.option("--grow-factor", type=float, default=2.0, show_default=True, help="sigma_k 'grows' when sigma_k(T) >= factor * sigma_k(0)."),
        seed_option,
        figure_out_option,
        json_option,
    ]
    for o in reversed(opts):
        f = o(f)
    return f


@theory.command("thm1", short_help="Theorem 1 on a deep linear network, with the Fig. 6 heatmaps.")
@thm_options
def thm1_cmd(fig_dir, as_json, **settings):
    """Theorem 1 on an (L+1)-layer linear network: Eq. 40 and Eq. 32/46 against measured d sigma_k/dt."""
    from ..actions.theory import thm1

    out = thm1(**settings, out=fig_dir, progress=progress_callback("theory thm1"))
    if as_json:
        click.echo(json.dumps(out, indent=1))
        return
    from ..analysis.theory.text import thm1_lines

    click.echo("\n".join(thm1_lines(out)))


@theory.command("align", short_help="The Fig. 6 alignment heatmaps alone.")
@thm_options
def align_cmd(fig_dir, as_json, **settings):
    """The Fig. 6 heatmaps alone: alignment of Pi's left and W_{L+1}'s right singular vectors."""
    from ..actions.theory import align

    got = align(**settings, out=fig_dir, progress=progress_callback("theory align"))
    if as_json:
        click.echo(json.dumps({"alignment": got["alignment"], "figures": got["figures"]}, indent=1))
        return
    from ..analysis.theory.text import align_lines

    click.echo("\n".join(align_lines(got["results"], got["figures"])))

