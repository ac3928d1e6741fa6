"""``collapse-lab report``: one self-contained HTML page per run store, readable offline
(``analysis.report_page``)."""
from __future__ import annotations

import json

import click

from .analysis_options import tau_option
from .options import device_option, json_option, store_option, writable_out
from ..errors import CollapseLabError
from .common import data_root_option, model_factory_options


def _no_out(value) -> None:
    """--out names a folder everywhere else; report writes one file, named by --html."""
    if value is not None:
        raise CollapseLabError("--out: report writes one file; give it as --html FILE (--out names an output folder "
                               "in the other commands)")


@click.command("report")
@store_option()
@click.option("--figures", "fig_dir", default="figures", show_default=True, type=click.Path(file_okay=False),
              help="Rendered figures (PNG) and the claims (claims-<preset>.json) to include, when the folder exists.")
@click.option("--out", "old_out", hidden=True, callback=lambda ctx, param, v: _no_out(v), expose_value=False)
@click.option("--html", default=None, type=click.Path(dir_okay=False), callback=writable_out,
              help="The HTML file to write (default: report_<store name>.html beside the store).")
@tau_option()
@device_option
@json_option
@data_root_option
@model_factory_options[0]
@model_factory_options[1]
def report_cmd(store, fig_dir, html, tau, device, as_json, data_root=None, model_factory=None, layer=None):
    """Write one self-contained HTML page for a run store: runs table, each run's metrics over
    rounds and last-round representation measures, the figures and the claims table."""
    from ..actions.report import report
    from .selection import warn

    got = report(store, figures=fig_dir, html=html, tau=tau, device=device, data_root=data_root,
                 model_factory=model_factory, layer=layer, say=lambda m: click.echo(m, err=True), warn=warn)
    if as_json:
        click.echo(json.dumps(got, indent=1))
    else:
        click.echo(f"report: {got['report']} ({got['bytes'] / 1e6:.2f} MB, {len(got['runs'])} run(s), "
                   f"{len(got['figures'])} figure(s))")
