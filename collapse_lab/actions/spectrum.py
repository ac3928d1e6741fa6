"""Covariance spectra of stored global and local models (``collapse-lab spectrum``), their
evolution over rounds, and one run's local-vs-global gap R (``collapse-lab compare``):
FedDecorr Fig. 2/3, the journal's Eq. 1 and Fig. 4/6."""
from __future__ import annotations


from ..errors import CollapseLabError
from ..spectra.constants import DEFAULT_TAU
from .selection import features_of, iid_twins, runs_of, say_stderr, warn_stderr



def spectrum(store="checkpoints", *, alpha=(), runs=(), dataset=None, model=None, methods=(), regs=(), round=None,
             client=0, tau=DEFAULT_TAU, split="test", feature_dtype="float64", device="auto", out="figures",
             over_rounds=None, top=None, live_only=False, logged=False, data_root=None, model_factory=None, layer=None,
             say=say_stderr, warn=warn_stderr) -> dict:
    """The spectra of the selected runs' models at ``round`` (default: the last), drawn into
    ``out`` with the store's IID twins as the reference: {"spectra": rows, "seed_groups",
    "notes", "figures"}; with ``over_rounds`` (all, A:B, A,B,C) their evolution: {"rounds": rows,
    "figures"}, from the checkpoints or, ``logged``, from what training logged."""
    from ..analysis import spectrum_rounds, spectrum_view
    from ..analysis.stored import check_analysis_options

    check_analysis_options(tau, client, top)
    if live_only and over_rounds is not None:
        raise CollapseLabError("--live-only has no effect with --over-rounds yet; drop one")
    if over_rounds is not None and round is not None:
        raise CollapseLabError("--round has no effect with --over-rounds (which draws the rounds it names); drop one")
    if logged and over_rounds is None:
        raise CollapseLabError("--logged draws spectra over rounds: give --over-rounds (e.g. --over-rounds all)")
    filters = dict(alpha=alpha, runs=runs, dataset=dataset, model=model, regs=regs, methods=methods)
    selected = runs_of(store, **filters, one_round=round is not None or over_rounds is not None, warn=warn)
    if logged:
        rows, paths = spectrum_rounds.logged_over_rounds(selected, over_rounds, tau, out)
        return {"rounds": rows, "figures": [str(p) for p in paths], "kind": "logged"}
    fs = features_of(data_root, model_factory, layer, split=split, dtype=feature_dtype, device=device)
    if over_rounds is not None:
        rows, paths = spectrum_rounds.over_rounds(selected, fs, over_rounds, client, tau, top, out, warn)
        return {"rounds": rows, "figures": [str(p) for p in paths], "kind": "rounds"}
    iid = iid_twins(store, selected, **filters)
    if iid:
        say(f"spectrum: the store's IID run(s) of the same settings drawn beside as the reference (alpha inf: "
            f"{len(iid)} run(s)); give --alpha inf yourself to choose otherwise")
    rows, curves, agg = spectrum_view.spectra(selected + iid, fs, round, client, tau, live_only, warn)
    paths = spectrum_view.draw_spectra(selected, rows, curves, tau, client, split, out)
    notes = [f"{a['label']} [{a['model']}]: mean +- std of log10 singular values over {a['n']} seeds drawn" for a in agg]
    return {"spectra": rows, "seed_groups": agg, "notes": notes, "figures": [str(p) for p in paths]}


def compare(store="checkpoints", *, alpha=(), runs=(), dataset=None, model=None, methods=(), regs=(), round=None,
            client=0, tau=DEFAULT_TAU, split="test", feature_dtype="float64", device="auto", out="figures", top=None,
            data_root=None, model_factory=None, layer=None, warn=warn_stderr) -> dict:
    """Each selected run's local (client ``client``) against its global spectrum at ``round``
    with the gap R over the top K (journal Eq. 1): {"compare": rows, "figures"}."""
    from ..analysis.spectrum_view import compare as compare_runs
    from ..analysis.stored import check_analysis_options

    check_analysis_options(tau, client, top)
    selected = runs_of(store, alpha, runs, dataset, model, regs, methods, one_round=True, warn=warn)  # each run alone
    fs = features_of(data_root, model_factory, layer, split=split, dtype=feature_dtype, device=device)
    results, paths = compare_runs(selected, fs, round, client, tau, top, out)
    return {"compare": results, "figures": [str(p) for p in paths]}
