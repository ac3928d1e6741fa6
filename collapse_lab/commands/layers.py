"""``collapse-lab layers``: where in the network collapse starts (issue 50). For the global
and a client's model of the chosen rounds, the covariance spectrum of every block's output
on the evaluation set (``analysis.features.layers``: one forward pass per model for all
layers, convolutional maps pooled per channel), with the measures of ``spectra.measures``
that read a spectrum; a layer x round heatmap of the effective rank per run and model."""
from __future__ import annotations

import json
from pathlib import Path

import click
import numpy as np

from ..errors import CollapseLabError
from .common import Progress, feature_source
from .selection import parse_rounds, select_runs
from .spectrum import check_common, common_options, local_kept



def model_layers(fs, run, r: int, client, layers, tau: float) -> list[dict]:
    """One model's rows: per layer its width and measures."""
    from ..layerwise import layer_spectra
    from ..spectra.measures import PER_LAYER, Inputs, value

    ds, _ = fs.dataset(run.config)
    got = layer_spectra(fs.model(run, r, client), getattr(ds, f"{fs.split}_x"), list(layers) or None, ds.to_float,
                        fs.device, fs.batch_size)
    return [{"layer": name, "width": width, **{m: value(m, Inputs(sv, floor, tau)) for m in PER_LAYER}}
            for name, (sv, floor, width) in got.items()]


def heatmap(rows: list[dict], measure: str, title: str, fig_dir: Path, stem: str) -> list[Path]:
    """Layers (input side at the top) x rounds: one column per run, one row per model
    (global, the client)."""
    from ..analysis.plots import save_figure
    from ..analysis.plots.style import grid

    runs = list(dict.fromkeys(e["run"] for e in rows))
    models = list(dict.fromkeys(e["model"] for e in rows))
    fig, axes = grid(len(models), len(runs))
    for i, model in enumerate(models):
        for j, run in enumerate(runs):
            mine = [e for e in rows if e["run"] == run and e["model"] == model]
            ax = axes[i][j]
            ax.grid(False)
            if not mine:
                ax.set_axis_off()
                continue
            layers = list(dict.fromkeys(e["layer"] for e in mine))
            rounds = sorted({e["round"] for e in mine})
            m = np.full((len(layers), len(rounds)), np.nan)
            for e in mine:
                m[layers.index(e["layer"]), rounds.index(e["round"])] = e[measure]
            im = ax.imshow(m, aspect="auto", cmap="viridis", interpolation="nearest")
            ax.set_xticks(range(len(rounds)), [str(r) for r in rounds], fontsize=6)
            ax.set_yticks(range(len(layers)), layers, fontsize=6)
            ax.set_xlabel("round")
            ax.set_title(f"{run[:36]}\n{model}", fontsize=7)
            fig.colorbar(im, ax=ax, label=measure.replace("_", " "))
    fig.suptitle(title, fontsize=8)
    return save_figure(fig, fig_dir, stem)


@click.command("layers", short_help="Per-layer covariance spectra over rounds: where collapse starts.")
@common_options(foreign_layer=False)
@click.option("--rounds", "rounds_spec", default=None, help="Rounds: all, A:B or A,B,C (default: the last, or --round).")
@click.option("--layer", "layers", multiple=True, metavar="NAME",
              help="A module of model.named_modules() (repeatable; z: the representation); default: the model's "
                   "blocks, else its activations, then z.")
def layers_cmd(alpha, runs, store, dataset, model, methods, regs, round_, client, tau, split, feature_dtype, device,
               fig_dir, as_json, rounds_spec, layers):
    """Effective rank, n above tau and participation ratio of every layer's covariance, for the
    global model and client --client's, at --rounds; a layer x round heatmap per run."""
    check_common(tau, client, None)
    if round_ is not None and rounds_spec is not None:
        raise CollapseLabError("--round has no effect with --rounds (which names the rounds); drop one")
    if feature_dtype != "float64":
        raise CollapseLabError("--feature-dtype: layers reads every layer in float64; drop the option")
    selected = select_runs(Path(store), alpha, runs, dataset, model, regs, methods)
    fs = feature_source(split=split, device=device)
    rows, warned = [], set()
    plan = [(run, r) for run in selected for r in
            parse_rounds(rounds_spec or str(round_ if round_ is not None else run.meta.get("rounds_complete", 0)),
                         int(run.meta.get("rounds_complete", 0)))]
    progress = Progress("layers", len(plan))
    for run, r in plan:
        for which, k in (("global", None), (f"client_{client}", client)):
            if k is not None and (r < 1 or not local_kept(run, r, k, warned)):
                continue
            base = {"run": run.path.name, "alpha": run.meta.get("alpha"), "reg": run.meta.get("reg"), "round": r,
                    "model": which}
            rows += [{**base, **e} for e in model_layers(fs, run, r, k, layers, tau)]
        progress.step(f"{run.path.name} round {r}")
    m = selected[0].meta
    paths = heatmap(rows, "effective_rank", f"{m['dataset']} / {m['model']}: effective rank of each layer's "
                    f"covariance ({split} set)", Path(fig_dir), f"layers_{m['dataset']}_{m['model']}")
    if as_json:
        click.echo(json.dumps({"layers": rows, "tau": tau, "figures": [str(p) for p in paths]}, indent=1))
        return
    click.echo(f"{'run':<48} {'model':<9} {'round':>5} {'layer':<14} {'width':>6} {'n>tau':>6} {'erank':>8} {'PR':>8}")
    for e in rows:
        click.echo(f"{e['run']:<48} {e['model']:<9} {e['round']:>5} {e['layer']:<14} {e['width']:>6} "
                   f"{e['n_significant']:>6} {e['effective_rank']:>8.2f} {e['participation_ratio']:>8.2f}")
    click.echo("figures: " + ", ".join(str(p) for p in paths))


__all__ = ["layers_cmd"]
