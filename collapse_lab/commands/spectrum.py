"""``collapse-lab spectrum`` and ``collapse-lab compare``: options, checks and printing over
``analysis.spectrum_view`` and ``analysis.spectrum_rounds``."""
from __future__ import annotations

import json

import click

from .analysis_options import analysis_options, rounds_option, top_option
from .selection import warn


def _print(key: str, kind: str, rows: list[dict], paths, as_json: bool, notes=(), **extra) -> None:
    """rows as JSON (under ``key``, with ``extra`` and the figures' paths), or as a table with
    ``notes`` and the figures' paths after it."""
    if as_json:
        click.echo(json.dumps({key: rows, **extra, "figures": [str(p) for p in paths]}, indent=1))
        return
    from ..analysis.text import spectrum_lines

    click.echo("\n".join([*spectrum_lines(rows, kind), *notes]))
    click.echo("figures: " + ", ".join(str(p) for p in paths))


@click.command("spectrum")
@analysis_options
@rounds_option("draws the evolution over rounds.")
@top_option()
@click.option("--live-only", is_flag=True, help="Spectra and rank measures over the live units only (dead and constant "
                                                 "units of z left out).")
@click.option("--logged", is_flag=True, help="With --over-rounds: the global spectra training logged on its probe set "
                                             "(no checkpoints needed).")
def spectrum_cmd(alpha, runs, store, dataset, model, methods, regs, round_, client, tau, split, feature_dtype, device, fig_dir, as_json,
                 over_rounds, top, live_only, logged, data_root=None, model_factory=None, layer=None):
    """Covariance spectra of global and local models (FedDecorr Fig. 2/3), or their evolution over rounds."""
    from ..actions.spectrum import spectrum

    got = spectrum(store, alpha=alpha, runs=runs, dataset=dataset, model=model, methods=methods, regs=regs,
                   round=round_, client=client, tau=tau, split=split, feature_dtype=feature_dtype, device=device,
                   out=fig_dir, over_rounds=over_rounds, top=top, live_only=live_only, logged=logged, data_root=data_root,
                   model_factory=model_factory, layer=layer, say=lambda m: click.echo(m, err=True), warn=warn)
    if "rounds" in got:
        return _print("rounds", got["kind"], got["rounds"], got["figures"], as_json)
    _print("spectra", "spectra", got["spectra"], got["figures"], as_json, got["notes"], seed_groups=got["seed_groups"])


@click.command("compare")
@analysis_options
@top_option()
def compare_cmd(alpha, runs, store, dataset, model, methods, regs, round_, client, tau, split, feature_dtype, device, fig_dir, as_json, top, data_root=None, model_factory=None, layer=None):
    """Local vs global spectrum of one run with the gap R (journal Eq. 1, Fig. 4/6)."""
    from ..actions.spectrum import compare

    got = compare(store, alpha=alpha, runs=runs, dataset=dataset, model=model, methods=methods, regs=regs,
                  round=round_, client=client, tau=tau, split=split, feature_dtype=feature_dtype, device=device,
                  out=fig_dir, top=top, data_root=data_root, model_factory=model_factory, layer=layer, warn=warn)
    results, paths = got["compare"], got["figures"]
    if as_json:
        click.echo(json.dumps({"compare": results, "figures": [str(p) for p in paths]}, indent=1))
        return
    from ..analysis.text import compare_lines

    for line in compare_lines(results):
        click.echo(line)
    click.echo("figures: " + ", ".join(str(p) for p in paths))


__all__ = ["spectrum_cmd", "compare_cmd"]
