"""How the representations of the global model and the clients relate (linear CKA,
``spectra.cka``) and how far they have collapsed onto their class means (NC1-NC4,
``spectra.neural_collapse``), at a round or over rounds (``collapse-lab cka``, ``nc``)."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..errors import CollapseLabError
from ..spectra.cka import cka_matrix
from ..spectra.neural_collapse import neural_collapse
from .round_choice import parse_rounds, pick_round
from .select import no_progress, quiet
from .stored import check_runs, local_kept


def rounds_of(run, spec: str | None, round_: int | None) -> list[int]:
    """The rounds ``--over-rounds`` names (``spec``), else ``--round`` (default: the run's last)."""
    if spec is not None and round_ is not None:
        raise CollapseLabError("--round has no effect with --over-rounds (which names the rounds); drop one")
    return parse_rounds(spec, int(run.meta.get("rounds_complete", 0))) if spec else [pick_round(run, round_)]


def cka(selected, fs, over_rounds: str | None = None, round_: int | None = None, fig_dir="figures",
        done: Callable[[str, int], None] = no_progress, warn: Callable[[str], None] = quiet) -> list[dict]:
    """Per run: linear CKA between the global model and every client stored at the last round
    asked (a models x models heatmap), and with several rounds CKA(client, global) over them."""
    from .plots import save_figure
    from .plots.rounds import plot_series
    from .plots.similarity import plot_matrix
    from .plots.style import grid

    out = []
    plans = [rounds_of(run, over_rounds, round_) for run in selected]  # bad --over-rounds: one line before any work
    check_runs(selected, fs)
    for run, rounds in zip(selected, plans):
        done(run.path.name, len(selected))
        last = rounds[-1]
        clients = run.clients_at(last)
        if not clients:
            warn(f"{run.path.name} keeps no client checkpoint of round {last}; CKA needs them (--keep-local)")
            continue
        reps = [fs.features(run, last, None)] + [fs.features(run, last, k) for k in clients]
        labels = ["global"] + [f"client {k}" for k in clients]
        m = cka_matrix(reps)
        rec = {"run": run.path.name, "round": last, "models": labels, "cka": m.tolist(),
               "cka_with_global": dict(zip(labels[1:], m[0, 1:].tolist()))}
        if len(rounds) > 1:
            series: dict[str, tuple[list[int], list[float]]] = {}
            for r in rounds:
                g = fs.features(run, r, None)
                for k in run.clients_at(r):
                    v = float(cka_matrix([g, fs.features(run, r, k)])[0, 1])
                    series.setdefault(f"client {k}", ([], []))[0].append(r)
                    series[f"client {k}"][1].append(v)
            rec["over_rounds"] = {k: {"rounds": x, "cka_with_global": y} for k, (x, y) in series.items()}
        out.append(rec)
        fig, axes = grid(1, 2 if len(rounds) > 1 else 1)
        # the colour scale starts at the smallest value (to 0.05): near-1 matrices keep their structure
        low = max(0.0, float(int(min(m.min().item(), 0.95) * 20)) / 20)
        plot_matrix(axes[0][0], m.numpy(), labels, f"linear CKA, round {last}", vmin=low)
        if len(rounds) > 1:
            plot_series(axes[0][1], series, "CKA with the global model", "clients vs global over rounds")
        fig.suptitle(run.path.name, fontsize=8)
        rec["figures"] = [str(p) for p in save_figure(fig, Path(fig_dir), f"cka_{run.path.name}_r{last}")]
    if not out:
        raise CollapseLabError("no run keeps client checkpoints at the rounds asked; train with --keep-local all")
    return out


def nc_check(fs, run, rounds) -> None:
    """What ``nc`` needs of a run, checked before any work is shown: each round's global
    checkpoint, and a classifier (``classifier.weight``) to measure NC2-NC4 against."""
    for r in rounds:
        fs.check_stored(run, r, None)
    if rounds and "classifier.weight" not in fs.stored_state(run, rounds[0], None):
        raise CollapseLabError(f"{run.path.name}: its checkpoints have no classifier.weight, which NC2-NC4 measure "
                               "against; nc reads collapse-lab's models (use spectrum or cka for this run)")


def nc_record(fs, run, r, k) -> dict:
    """NC1-NC4 of one model (the global, or client k's) at round r."""
    ds, _ = fs.dataset(run.config)
    y = getattr(ds, f"{fs.split}_y")
    state = fs.stored_state(run, r, k)
    out = neural_collapse(fs.features(run, r, k), y, state["classifier.weight"], state.get("classifier.bias"))
    return {"run": run.path.name, "round": r, "model": "global" if k is None else f"client_{k}", **out}


def nc(selected, fs, over_rounds: str | None = None, round_: int | None = None, client: int = 0, fig_dir="figures",
       done: Callable[[str, int], None] = no_progress,
       warn: Callable[[str], None] = quiet) -> tuple[list[dict], list[str]]:
    """NC1-NC4 of the global model and client ``client``'s per run and round asked; with
    ``over_rounds`` the figure of NC1, NC3, NC4 over the rounds (its paths)."""
    from .plots import save_figure
    from .plots.rounds import plot_series
    from .plots.style import grid

    rows, warned = [], set()
    plans = [rounds_of(run, over_rounds, round_) for run in selected]  # bad --over-rounds: one line before any work
    check_runs(selected, fs, client)
    for run, rounds in zip(selected, plans):
        nc_check(fs, run, rounds)
    for run, rounds in zip(selected, plans):
        done(run.path.name, len(selected))
        for r in rounds:
            rows.append(nc_record(fs, run, r, None))
            if local_kept(run, r, client, warn, warned):
                rows.append(nc_record(fs, run, r, client))
    figures = []
    if over_rounds:
        fig, (axes,) = grid(1, 3)
        for ax, key, label in zip(axes, ("nc1", "nc3", "nc4"), ("NC1", "NC3", "NC4")):
            series = {}
            for e in rows:
                s = series.setdefault(f"{e['run'][:40]} {e['model']}", ([], []))
                s[0].append(e["round"])
                s[1].append(e[key])
            plot_series(ax, series, label, f"{label} over rounds")
        axes[0].set_yscale("log")
        figures = [str(p) for p in save_figure(fig, Path(fig_dir), f"nc_{selected[0].path.name}_over_rounds")]
    return rows, figures
