"""Where in the network collapse starts (``collapse-lab layers``). For the global
and a client's model of the chosen rounds, the covariance spectrum of every block's output
on the evaluation set (``layerwise``: one float64 forward pass per model for all layers,
convolutional maps pooled per channel; cached beside the store like the representations),
with the measures of ``spectra.measures.PER_LAYER``; a layer x round heatmap of the
effective rank per run and model, and the spectra of the layers at chosen rounds."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from ..errors import CollapseLabError
from .round_choice import parse_rounds
from .select import no_progress, quiet
from .stored import check_runs, local_kept, model_layers


def collapse_by_layer(selected, fs=None, over_rounds: str | None = None, round_: int | None = None, client: int = 0,
                      layers=(), tau: float = 0.01, positions: int = 0, spectra_at: str | None = None,
                      split: str = "test", fig_dir="figures", logged: bool = False,
                      done: Callable[[str, int], None] = no_progress,
                      warn: Callable[[str], None] = quiet) -> tuple[list[dict], int, list[Path]]:
    """Per run, chosen round (default: every kept round from 0), model (global and client
    ``client``'s) and layer: its width and measures; the number of models read from
    checkpoints; the heatmap and spectra figures' paths. ``logged``: what training logged
    (``train --probe-layers``) instead of the checkpoints. ``fs``: a ``FeatureSource``."""
    check_runs(selected, None if logged else fs, client)  # one line before any progress
    if logged:
        rows, spectra, computed = _logged_rows(selected, over_rounds, round_, client, tau, layers), [], 0
    else:
        plan = _plan(selected, over_rounds, round_, spectra_at, warn)
        rows, spectra = _computed_rows(fs, selected, plan, client, layers, tau, positions, done, warn)
        computed = fs.computed
    paths = _figures(rows, spectra, tau, "probe" if logged else split, selected[0].meta, Path(fig_dir),
                     iid_groups(selected, groups(selected)))
    return rows, computed, paths


def _figures(rows: list[dict], spectra: list[dict], tau: float, split: str, meta: dict, fig_dir: Path,
             reference: dict | None = None) -> list[Path]:
    from .plots import save_figures
    from .plots.layers import heatmap_figure, layer_spectra_figure

    what = f"{meta['dataset']} / {meta['model']}"
    stem = f"layers_{meta['dataset']}_{meta['model']}"
    items = [(heatmap_figure(rows, "effective_rank", f"{what}: effective rank of each layer's covariance ({split} set)",
                             reference), stem)]
    if spectra:  # --logged: training logs measures, not spectra
        items.append((layer_spectra_figure(spectra, tau, f"{what}: each layer's covariance spectrum ({split} set)"),
                      f"{stem}_spectra"))
    return save_figures(items, fig_dir)


def _plan(selected, over_rounds, round_, spectra_at, warn) -> list[tuple]:
    """(run, round, whether its spectra are drawn) for every run and chosen round."""
    out = []
    for run in selected:
        last = int(run.meta.get("rounds_complete", 0))
        if over_rounds is None and round_ is None:  # where collapse starts: every kept round from the initial model
            asked = list(range(last + 1))
        else:
            asked = parse_rounds(over_rounds or str(round_), last, "--over-rounds" if over_rounds else "--round")
        rounds = [r for r in asked if run.has_global(r)]  # a retention setting may have pruned some
        if not rounds:
            raise CollapseLabError(f"--over-rounds: {run.path.name} holds none of rounds {asked} (pruned by --keep-global, "
                                   f"or never recorded); it holds {[r for r in range(last + 1) if run.has_global(r)]}")
        if len(rounds) < len(asked):
            warn(f"{run.path.name}: rounds {sorted(set(asked) - set(rounds))} are not stored (pruned by --keep-global, "
                 "or never recorded); skipped")
        drawn = parse_rounds(spectra_at, last, "--spectra-at") if spectra_at else sorted({rounds[0], rounds[-1]})
        if not set(drawn) <= set(rounds):
            raise CollapseLabError(f"--spectra-at {spectra_at!r}: round(s) {sorted(set(drawn) - set(rounds))} are "
                                   "not among --over-rounds; name rounds that are")
        out += [(run, r, r in drawn) for r in rounds]
    return out


def iid_groups(selected, group: dict) -> dict:
    """group -> the group of its IID twin (the same settings at alpha inf) among ``selected``."""
    def key(run) -> str:
        return json.dumps({k: v for k, v in run.config.identity().items() if k not in ("alpha", "seed")},
                          sort_keys=True, default=str)

    iid = {key(r): group[r.path] for r in selected if str(r.meta.get("alpha")) == "inf"}
    return {group[r.path]: iid[key(r)] for r in selected
            if str(r.meta.get("alpha")) != "inf" and key(r) in iid}


def groups(selected) -> dict:
    """run path -> its configuration's label (method, regularizer, alpha, beta: its runs differ
    only in the seed), or the run's name where two configurations would share a label."""
    from ..labels import label

    key = {r.path: r.config.seedless_key() for r in selected}
    lab = {}
    for r in selected:
        m = r.meta
        lab[key[r.path]] = label({"method": m.get("method"), "reg": m.get("reg"), "alpha": m.get("alpha"),
                                  **({"beta": m.get("beta")} if m.get("reg") not in (None, "none") else {})})
    unique = len(set(lab.values())) == len(lab)
    return {r.path: lab[key[r.path]] if unique else r.path.name for r in selected}


def _computed_rows(fs, selected, plan, client, layers, tau, positions, done, warn) -> tuple[list[dict], list[dict]]:
    """Each planned model's rows, read from its checkpoint (cached), and the spectra drawn."""
    rows, spectra, warned, group = [], [], set(), groups(selected)
    drawn_at = {(run.path, r) for run, r, drawn in plan if drawn}
    for run, r, drawn in plan:
        for which, k in (("global", None), (f"client_{client}", client)):
            base = {"run": run.path.name, "group": group[run.path], "alpha": run.meta.get("alpha"),
                    "reg": run.meta.get("reg"), "round": r, "model": which}
            if k is not None and r < 1:  # no client model at round 0: its column shows the client's first round
                first = next((q for q in range(1, int(run.meta.get("rounds_complete", 0)) + 1)
                              if run.has_client(q, k)), None)
                if drawn and first is not None and (run.path, first) not in drawn_at:
                    _, svs = model_layers(fs, run, first, k, layers, tau, positions)
                    spectra += [{**base, "round": first, "column": r, "layer": n, "sv": sv, "floor": f}
                                for n, (sv, f) in svs.items()]
                continue
            if k is not None and not local_kept(run, r, k, warn, warned):
                continue
            got, svs = model_layers(fs, run, r, k, layers, tau, positions)
            rows += [{**base, **e} for e in got]
            spectra += [{**base, "column": r, "layer": n, "sv": sv, "floor": f}
                        for n, (sv, f) in svs.items()] if drawn else []
        done(f"{run.path.name} round {r}", len(plan))
    return rows, spectra


def _logged_rows(selected, over_rounds, round_, client, tau, layers) -> list[dict]:
    """--logged: the rows ``train --probe-layers`` wrote to metrics.jsonl (the probe set, the
    global model and client 0, the probe's tau); no checkpoint is read."""
    from .run_log import layer_rows
    from ..spectra.functional import DEFAULT_TAU

    if tau != DEFAULT_TAU or client != 0 or layers:
        raise CollapseLabError(f"--logged: training logged client 0's and the global model's default layers at tau "
                               f"{DEFAULT_TAU:g}; drop --tau, --client and --layer (or read the checkpoints without "
                               "--logged)")
    rows, group = [], groups(selected)
    for run in selected:
        logged = layer_rows(run.metrics(), run.path.name)
        if not logged:
            raise CollapseLabError(f"--logged: {run.path.name} logged no layers (train it with --probe-layers, or "
                                   "read its checkpoints without --logged)")
        last = int(run.meta.get("rounds_complete", 0))
        keep = set(parse_rounds(over_rounds, last) if over_rounds else [round_] if round_ is not None else range(last + 1))
        rows += [{"group": group[run.path], "alpha": run.meta.get("alpha"), "reg": run.meta.get("reg"),
                  **{k: v for k, v in e.items() if k != "run"}, "run": run.path.name}
                 for e in logged if e["round"] in keep]
    return rows
