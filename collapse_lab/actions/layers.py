"""Where in the network collapse starts (``collapse-lab layers``): the effective rank, n above
tau and participation ratio of every layer's covariance over rounds, and the round and layer
at which each run's collapse sets in against its IID twin (``analysis.onset``)."""
from __future__ import annotations


from ..errors import CollapseLabError
from ..spectra.constants import DEFAULT_TAU
from .selection import features_of, iid_twins, runs_of, say_stderr, warn_stderr




def layers(store="checkpoints", *, alpha=(), runs=(), dataset=None, model=None, methods=(), regs=(), round=None,
           client=0, tau=DEFAULT_TAU, split="test", feature_dtype="float64", device="auto", out="figures",
           over_rounds=None, layers=(), spectra_at=None, positions=0, logged=False, data_root=None, model_factory=None,
           progress=None, say=say_stderr, warn=warn_stderr) -> dict:
    """Every layer (``layers``: names of ``model.named_modules()`` and ``z``; default the
    model's blocks, else its activations, then z) of the global model and client ``client``
    at ``over_rounds`` (all, A:B, A,B,C; default every kept round) or ``round``, from the
    checkpoints or, ``logged``, from what ``train --probe-layers`` logged; a heatmap per run
    and the spectra at ``spectra_at`` drawn into ``out``. Returns {"layers": rows, "tau",
    "computed" (models read), "onset" (per run, against the IID twins), "figures"}.
    ``progress(label, total)``: called as each model is read."""
    from ..analysis.layer_view import collapse_by_layer, groups, iid_groups
    from ..analysis.onset import summary
    from ..analysis.select import no_progress
    from ..analysis.stored import check_analysis_options

    check_analysis_options(tau, client, None)
    if any(not name.strip() for name in layers):
        raise CollapseLabError("--layer is empty; name a module of model.named_modules() (or z, the representation)")
    if round is not None and over_rounds is not None:
        raise CollapseLabError("--round has no effect with --over-rounds (which names the rounds); drop one")
    if positions < 0 or (logged and positions):
        raise CollapseLabError(f"--positions {positions}: give P >= 1 positions (0: channel means)" if positions < 0
                               else "--positions: training logged channel means; drop --positions or --logged")
    filters = dict(alpha=alpha, runs=runs, dataset=dataset, model=model, regs=regs, methods=methods)
    selected = runs_of(store, **filters, one_round=round is not None or over_rounds is not None, warn=warn)
    iid = iid_twins(store, selected, **filters)
    if logged:  # a twin that logged no layers cannot be the reference of logged measures
        from ..analysis.run_log import layer_rows

        iid = [r for r in iid if layer_rows(r.metrics(), r.path.name)]
    if iid:
        say(f"layers: the store's IID run(s) of the same settings read as the reference (alpha inf: {len(iid)} "
            "run(s)); give --alpha inf yourself to choose otherwise")
    selected = selected + iid
    fs = None if logged else features_of(data_root, model_factory, split=split, dtype=feature_dtype, device=device)
    rows, computed, paths = collapse_by_layer(selected, fs, over_rounds, round, client, list(layers), tau, positions,
                                              spectra_at, split, out, logged,
                                              progress or no_progress, warn)
    onset = summary(rows, iid_groups(selected, groups(selected)))
    return {"layers": rows, "tau": tau, "computed": computed, "onset": onset, "figures": [str(p) for p in paths]}
