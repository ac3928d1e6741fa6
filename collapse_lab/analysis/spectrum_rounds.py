"""Spectra over rounds (``spectrum --over-rounds``): per run and round the global (and client)
spectrum, the count above tau and the gap R, from checkpoints; or, with ``logged``, from the
probe records training wrote to ``metrics.jsonl`` (``training.probe``), with no checkpoint or
forward pass: what runs with ``--keep-local none`` and pruned rounds still show."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import torch

from ..errors import CollapseLabError
from ..spectra.constants import TOP
from ..spectra.measures import PROBED, Inputs, value
from ..labels import describe
from .round_choice import kept_rounds, parse_rounds
from .select import quiet
from .stored import local_kept, spectrum_of


def _stem(kind: str, selected, spec: str) -> str:
    m = selected[0].meta
    return f"{kind}_{m['dataset']}_{m['model']}_{spec.replace(':', '-').replace(',', '-')}"


def over_rounds(selected, fs, spec: str, client: int, tau: float, top: int | None, fig_dir,
                warn: Callable[[str], None] = quiet) -> tuple[list[dict], list[Path]]:
    """Per run and held round its records; the figure (per run: spectra by round, the count
    above tau, R between client ``client`` and the global model) saved under ``fig_dir``."""
    from ..spectra.functional import local_global_gap
    from .plots import save_figure
    from .plots.rounds import plot_series, plot_spectra_over_rounds
    from .plots.style import grid

    fig, axes = grid(len(selected), 3)
    out, warned = [], set()
    for row, run in zip(axes, selected):
        asked = parse_rounds(spec, int(run.meta.get("rounds_complete", 0)))
        rounds = [r for r in asked if run.has_global(r)]  # retention, or an import of some rounds
        if "recorded_by" not in run.meta:  # trained here: a round neither held nor pruned is damage, said
            lost = [r for r in asked if r not in rounds and r not in run.pruned()["global"]]
            if lost:
                raise CollapseLabError(f"{run.path.name}: {run.checkpoint_name(lost[0])} is missing, "
                                       "and the run did not prune it: the run is damaged; collapse-lab train --resume "
                                       "with its options recreates it")
        if not rounds:
            raise CollapseLabError(f"--over-rounds {spec}: {run.path.name} holds none of rounds {asked}; it holds "
                                   f"{kept_rounds(run)}")
        if len(rounds) < len(asked) and spec != "all":
            warn(f"{run.path.name}: rounds {sorted(set(asked) - set(rounds))} are not held; skipped")
        svs, floors, series = [], [], {"global": ([], []), f"client {client}": ([], [])}
        gap = ([], [])
        for r in rounds:
            sg, fg = spectrum_of(fs.features(run, r, None), fs)
            svs.append(sg)
            floors.append(fg)
            series["global"][0].append(r)
            series["global"][1].append(value("n_significant", Inputs(sg, 0.0, tau)))
            rec = {"run": run.path.name, "alpha": run.meta.get("alpha"), "round": r,
                   **{f"{m}_global": value(m, Inputs(sg, fg, tau)) for m in ("n_significant", "effective_rank")}}
            if r >= 1 and local_kept(run, r, client, warn, warned):
                sl, fl = spectrum_of(fs.features(run, r, client), fs)
                series[f"client {client}"][0].append(r)
                series[f"client {client}"][1].append(value("n_significant", Inputs(sl, 0.0, tau)))
                R, K = local_global_gap(sl, sg, fl, fg, top)
                gap[0].append(r)
                gap[1].append(R)
                rec.update({f"{m}_local": value(m, Inputs(sl, fl, tau)) for m in ("n_significant", "effective_rank")},
                           R=R, K=K)
            out.append(rec)
        name = describe(run.meta)
        plot_spectra_over_rounds(row[0], rounds, svs, floors, TOP, f"{name}: global spectrum by round")
        plot_series(row[1], series, f"count above tau = {tau:g}", f"{name}: significant singular values")
        plot_series(row[2], {"R (local vs global)": gap}, "R", f"{name}: local-global gap R")
    return out, save_figure(fig, Path(fig_dir), _stem("spectrum_rounds", selected, spec))


def probe_records(run) -> dict[int, dict]:
    """Round -> the probe record training logged for it."""
    return {int(e["round"]): e for e in run.metrics() if e.get("event") == "probe"}


def logged_over_rounds(selected, spec: str, tau: float, fig_dir) -> tuple[list[dict], list[Path]]:
    """Per run and logged round the probe's top singular values and the measures over them
    (named ``_top``), with the whole spectrum's measures as the probe computed them."""
    from .plots import save_figure
    from .plots.rounds import plot_series, plot_spectra_over_rounds
    from .plots.style import grid

    fig, axes = grid(len(selected), 2)
    out = []
    for row, run in zip(axes, selected):
        probes = probe_records(run)
        if not probes:
            raise CollapseLabError(f"{run.path.name} has no probe spectra in its metrics (trained with --probe 0, or "
                                   "before they were logged); drop --logged to compute spectra from checkpoints")
        rounds = [r for r in parse_rounds(spec, int(run.meta.get("rounds_complete", 0))) if r in probes]
        svs = [torch.tensor(probes[r]["probe_sv"], dtype=torch.float64) for r in rounds]
        floors = [float(probes[r]["probe_floor"]) for r in rounds]
        for r, sv, fl in zip(rounds, svs, floors):
            p = probes[r]
            top = Inputs(sv, fl, tau, len(sv))  # the logged top values: the measures over them say "_top"
            out.append({"run": run.path.name, "alpha": run.meta.get("alpha"), "round": r, "probe_n": p["probe_n"],
                        "n_significant_top": value("n_significant_top", top),
                        "effective_rank_top": value("effective_rank_top", top),
                        # the whole spectrum's, as the probe computed them (absent in older runs' records)
                        **{m: p.get(f"probe_{m}") for m in PROBED},
                        "singular_values": p["probe_sv"], "classifier_singular_values": p.get("probe_classifier_sv")})
        name = describe(run.meta)
        plot_spectra_over_rounds(row[0], rounds, svs, floors, len(svs[0]), f"{name}: logged global spectrum")
        plot_series(row[1], {"global (probe)": (rounds, [value("n_significant_top", Inputs(s, 0.0, tau, len(s)))
                                                        for s in svs])},
                    f"count above tau = {tau:g}", f"{name}: significant singular values")
    return out, save_figure(fig, Path(fig_dir), _stem("spectrum_logged", selected, spec))
