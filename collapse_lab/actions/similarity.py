"""How alike the stored models' representations are (``collapse-lab cka``: linear CKA,
Kornblith et al. 2019) and how far they have collapsed onto their class means
(``collapse-lab nc``: NC1-NC4, Papyan et al. 2020)."""
from __future__ import annotations

from ..errors import CollapseLabError
from ..spectra.constants import DEFAULT_TAU
from .selection import features_of, runs_of, warn_stderr



def cka(store="checkpoints", *, alpha=(), runs=(), dataset=None, model=None, methods=(), regs=(), round=None,
        client=None, tau=DEFAULT_TAU, split="test", feature_dtype="float64", device="auto", out="figures", over_rounds=None,
        data_root=None, model_factory=None, layer=None, progress=None, warn=warn_stderr) -> dict:
    """Linear CKA (unbiased HSIC) between the global model and every client stored at
    ``round`` (a heatmap per run in ``out``); with ``over_rounds`` also each client against the
    global model over the rounds: {"cka": one record per run}. ``client`` must stay None:
    every stored client is compared."""
    from ..analysis.select import no_progress
    from ..analysis.similarity_view import cka as cka_runs
    from ..analysis.stored import check_analysis_options

    check_analysis_options(tau, client or 0, None)  # --tau, shared by the analyses, checked here too
    if client is not None:
        raise CollapseLabError("--client has no effect on cka: it compares the global model with every client stored "
                               "at the round; drop --client")
    selected = runs_of(store, alpha, runs, dataset, model, regs, methods, one_round=True, warn=warn)  # each run alone
    fs = features_of(data_root, model_factory, layer, split=split, dtype=feature_dtype, device=device)
    return {"cka": cka_runs(selected, fs, over_rounds, round, out, progress or no_progress, warn)}


def nc(store="checkpoints", *, alpha=(), runs=(), dataset=None, model=None, methods=(), regs=(), round=None,
       client=0, tau=DEFAULT_TAU, split="test", feature_dtype="float64", device="auto", out="figures", over_rounds=None,
       data_root=None, model_factory=None, layer=None, progress=None, warn=warn_stderr) -> dict:
    """NC1 (within-class variability relative to between-class), NC2 (equinorm and
    equiangularity of the class means and classifier rows), NC3 (self-duality) and NC4
    (nearest class centre) of the global model and client ``client`` at ``round`` or over
    ``over_rounds``: {"neural_collapse": rows, "figures"}."""
    from ..analysis.select import no_progress
    from ..analysis.similarity_view import nc as nc_runs
    from ..analysis.stored import check_analysis_options

    check_analysis_options(tau, client, None)
    selected = runs_of(store, alpha, runs, dataset, model, regs, methods, one_round=True, warn=warn)  # each run alone
    fs = features_of(data_root, model_factory, layer, split=split, dtype=feature_dtype, device=device)
    rows, figures = nc_runs(selected, fs, over_rounds, round, client, out, progress or no_progress, warn)
    return {"neural_collapse": rows, "figures": figures}
