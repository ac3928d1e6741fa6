"""``collapse-lab spectrum --rounds SPEC --logged``: the global spectra over rounds from the
probe records training wrote to ``metrics.jsonl`` (``training.probe``), without a checkpoint or a
forward pass: what runs with ``--keep-local none`` and pruned rounds still show."""
from __future__ import annotations

import json
from pathlib import Path

import click
import torch

from ..errors import CollapseLabError
from ..spectra.measures import PROBED, Inputs, value
from ..analysis.labels import describe
from .selection import parse_rounds


def probe_records(run) -> dict[int, dict]:
    return {int(e["round"]): e for e in run.metrics() if e.get("event") == "probe"}


def logged_rounds(selected, spec: str, tau: float, fig_dir, as_json: bool) -> None:
    from ..analysis.plots import save_figure
    from ..analysis.plots.style import grid
    from ..analysis.plots.rounds import plot_series, plot_spectra_over_rounds

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
    m = selected[0].meta
    stem = f"spectrum_logged_{m['dataset']}_{m['model']}_{spec.replace(':', '-').replace(',', '-')}"
    paths = save_figure(fig, Path(fig_dir), stem)
    if as_json:
        click.echo(json.dumps({"rounds": out, "figures": [str(p) for p in paths]}, indent=1))
        return
    click.echo(f"{'run':<48} {'round':>5} {'n>tau':>6} {'dead':>5}")
    for e in out:
        click.echo(f"{e['run']:<48} {e['round']:>5} {e['n_significant_top']:>6} {e['dead_units']:>5}")
    click.echo("figures: " + ", ".join(str(p) for p in paths))
