"""The options of the commands that analyse stored runs (spectrum, compare, layers, cka, nc,
report), declared once: which runs, which round and model, how features are read, where
figures go."""
from __future__ import annotations

import click

from ..spectra.constants import DEFAULT_TAU
from .common import data_root_option, model_factory_options
from .options import device_option, figure_out_option, json_option, store_option


def rounds_option(what: str):
    """--over-rounds of the analyses: which stored rounds to read. Its own name, as train's and
    bench's --rounds counts rounds to run: a selection is never a count."""
    return click.option("--over-rounds", "over_rounds", default=None, metavar="ROUNDS",
                        help=f"Rounds to read: all, A:B or A,B,C; {what}")


def tau_option():
    return click.option("--tau", type=float, default=DEFAULT_TAU, show_default=True,
                        help="Significance threshold on sigma_k (the papers' log tau = -2).")


def top_option():
    return click.option("--top", type=int, default=None,
                        help="Indices used for R (default: all above the numerical floor).")


def analysis_options(f=None, *, foreign_layer: bool = True):
    """The options of the commands that analyse stored runs; ``foreign_layer=False`` leaves
    out --layer (the representation's module of a model from elsewhere), for a command whose
    --layer means something else (``layers``)."""
    if f is None:
        return lambda g: analysis_options(g, foreign_layer=foreign_layer)
    opts = [
        click.option("--alpha", multiple=True, help="Dirichlet alpha of the runs (repeatable; default: all runs found)."),
        click.option("--run", "runs", multiple=True, type=click.Path(file_okay=False), help="Run folder(s) to use instead of searching."),
        store_option("Run store to search."),
        click.option("--dataset", default=None, help="Only runs on this data set."),
        click.option("--model", default=None, help="Only runs of this model."),
        click.option("--method", "methods", multiple=True, help="Only runs of this method (repeatable)."),
        click.option("--reg", "regs", multiple=True, help="Only runs with this regularizer (repeatable)."),
        click.option("--round", "round_", type=int, default=None, help="Round to analyse (default: the last)."),
        click.option("--client", type=int, default=0, show_default=True,
                     help="Client whose local model is shown (runs that keep no client checkpoint: global only)."),
        tau_option(),
        click.option("--split", default="test", show_default=True, help="Evaluation set: test (as in the paper) or train."),
        click.option("--feature-dtype", default="float64", show_default=True, help="Forward pass precision for z."),
        device_option,
        figure_out_option,
        json_option,
        data_root_option,
        *(model_factory_options if foreign_layer else model_factory_options[:1]),
    ]
    for o in reversed(opts):
        f = o(f)
    return f
