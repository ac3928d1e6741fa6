"""``collapse-lab report``: one self-contained HTML page per run store, readable offline.

The page holds the runs table, every run's panel (accuracy, the logged global spectrum,
its count above tau and dead units over rounds, CKA of the stored models at the last
round) and its last-round numbers (dead units, RankMe, stable rank, alpha-ReQ, NC1-NC4,
CKA(client, global)), the rendered figures of a figures folder and the claims figures checked (its claims-<preset>.json).
Images are embedded as data URIs; no script, style sheet or font is fetched. A short
inline script records, once the page has loaded, how many images decoded and whether any
script error occurred (``data-images``, ``data-images-ok``, ``data-errors`` on <body>),
which the headless-browser test reads.
"""
from __future__ import annotations

import base64
import html
import io
import json
import time
from pathlib import Path

import click

from .options import store_option, tau_option
from ..errors import CollapseLabError
from .common import data_root_option, feature_source, model_factory_options
from ..files import write_bytes

SELF_CHECK = """<script>
window.__errors = 0;
window.addEventListener('error', function () { window.__errors += 1; });
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  document.body.setAttribute('data-images', String(imgs.length));
  document.body.setAttribute('data-images-ok', String(ok));
  document.body.setAttribute('data-errors', String(window.__errors));
});
</script>"""

STYLE = """<style>
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; font-size: 12px; margin: 0.5em 0 1.5em; }
td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: left; }
th { background: #f0f0f0; }
img { max-width: 100%; border: 1px solid #eee; }
h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
</style>"""


def png_uri(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def table(header: list[str], rows: list[list]) -> str:
    cells = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_fmt(v))}</td>" for v in r) + "</tr>" for r in rows)
    return f"<table><tr>{cells}</tr>{body}</table>"


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "" if v is None else str(v)


def claims_rows(path: Path) -> tuple[list[str], list[list[str]]] | None:
    """The claims ``figures`` checked, read from the ``claims-<preset>.json`` it writes beside
    CLAIMS-<preset>.md (the JSON, not the Markdown made from it), as header and rows."""
    if not path.is_file():
        return None
    try:
        records = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    from ..analysis.seeds import verdict_text

    rows = [[rec["entry"], c["text"], str(c["measured"]), str(c.get("over_seeds") or ""),
             verdict_text(c).replace("**", "")]
            for rec in records if isinstance(rec, dict) for c in rec.get("claims", [])]
    return (["entry", "claim", "measured (seed means)", "over seeds: mean [95 % interval]", "verdict"], rows) \
        if rows else None


def run_numbers(run, fs, tau: float) -> tuple[dict, object, list[str] | None]:
    """Last-round numbers of the global model (and CKA of the stored clients)."""
    from ..spectra.cka import cka_matrix
    from ..spectra.functional import spectrum
    from ..spectra.neural_collapse import neural_collapse
    from ..spectra.measures import REPORTED, measures

    r = int(run.meta.get("rounds_complete", 0))
    z = fs.features(run, r, None)
    sv, floor = spectrum(z)
    ds, _ = fs.dataset(run.config)
    state = fs.stored_state(run, r, None)
    w = state.get("classifier.weight")  # a model from elsewhere may name its classifier otherwise
    nc = (neural_collapse(z, getattr(ds, f"{fs.split}_y"), w, state.get("classifier.bias")) if w is not None
          and w.shape[-1] == z.shape[1] else {"nc1": None, "nc3": None, "nc4": None})
    e = measures(sv, floor, tau, z)  # the spectrum command's numbers, from the same function
    out = {"round": r, "dim": e["dim"], **{k: e[k] for k in REPORTED},
           "nc1": nc["nc1"], "nc3": nc["nc3"], "nc4": nc["nc4"]}
    clients = run.clients_at(r)
    if not clients:
        return out, None, None
    m = cka_matrix([z] + [fs.features(run, r, k) for k in clients])
    out["cka_with_global"] = {k: float(v) for k, v in zip(clients, m[0, 1:].tolist())}
    return out, m.numpy(), ["global"] + [f"client {k}" for k in clients]


def run_section(run, fs, tau: float) -> tuple[dict, str]:
    """One run's numbers and its part of the page: the panel (accuracy, the probe's spectra,
    CKA) and the table of its last round's measures; a damaged run is said, not analysed."""
    from ..analysis.plots import plt
    from ..analysis.plots.style import grid
    from ..analysis.plots.report import plot_run_panel
    from ..spectra.measures import REPORTED
    from .selection import warn

    ev = [e for e in run.metrics() if e.get("event") == "round"]
    probes = sorted((e for e in run.metrics() if e.get("event") == "probe"), key=lambda e: e["round"])
    try:
        nums, cka, labels = run_numbers(run, fs, tau)
    except CollapseLabError as e:  # one damaged run: said on its line and in the page; the others go on
        warn(f"report: {run.path.name} not analysed: {e}")
        return {"error": str(e)}, f"<h3>{html.escape(run.path.name)}</h3><p>not analysed: {html.escape(str(e))}</p>"
    fig, (axes,) = grid(1, 4, scale=1.4)
    ev = [e for e in ev if isinstance(e.get("test_acc"), (int, float))]  # a recorded run may log no accuracy
    plot_run_panel(axes, ([e["round"] for e in ev], [e["test_acc"] for e in ev]), probes, tau, cka, labels,
                   run.path.name)
    uri = png_uri(fig)
    plt.close(fig)
    keys = ["round", "dim", *REPORTED, "nc1", "nc3", "nc4"]
    cka_txt = "" if "cka_with_global" not in nums else ", ".join(
        f"{k}: {v:.3f}" for k, v in nums["cka_with_global"].items())
    m = run.meta  # the settings two runs of a store differ by, beside the hash of the folder name
    settings = ", ".join(f"{k.replace('_', ' ')} {m.get(k)}" for k in ("dataset", "model", "method", "reg", "alpha", "seed",
                                                                      "rounds", "local_epochs", "lr", "batch_size")
                         if m.get(k) is not None)
    nums["settings"] = {k: m.get(k) for k in ("lr", "local_epochs", "rounds", "batch_size")}
    return nums, (f"<h3>{html.escape(run.path.name)}</h3><p>{html.escape(settings)}</p>"
                  f"<img alt='{html.escape(run.path.name)}' src='{uri}'>"
                  + table(keys, [[nums[k] for k in keys]])
                  + (f"<p>CKA(client, global), last round: {html.escape(cka_txt)}</p>" if cka_txt else ""))


def layers_section(run, fs, tau: float) -> tuple[list[dict], str]:
    """Where in the network collapse stands at the last round (``collapse-lab layers``): each
    layer's measures for the global model, and the layer x round heatmap of the effective rank
    where training logged it (``train --probe-layers``)."""
    from ..analysis.run_log import HEATMAP, heatmap_rgb, layer_rows
    from ..spectra.measures import PER_LAYER
    from ..analysis.stored import model_layers

    r = int(run.meta.get("rounds_complete", 0))
    try:
        rows, _ = model_layers(fs, run, r, None, (), tau)
    except CollapseLabError as e:  # a model the layers cannot be read from: said, the page goes on
        return [], f"<p>layers not read: {html.escape(str(e))}</p>"
    part = (f"<p>Each layer of the global model, round {r} (<code>collapse-lab layers</code>):</p>"
            + table(["layer", "width", *PER_LAYER], [[e["layer"], e["width"], *(e[m] for m in PER_LAYER)]
                                                     for e in rows]))
    logged = layer_rows(run.metrics(), run.path.name)
    if logged:
        from PIL import Image

        buf = io.BytesIO()
        Image.fromarray(heatmap_rgb(logged, f"{run.path.name}: {HEATMAP} (train --probe-layers)")).save(buf, "png")
        part += (f"<img alt='layers of {html.escape(run.path.name)}' src='data:image/png;base64,"
                 f"{base64.b64encode(buf.getvalue()).decode()}'>")
    return rows, part


@click.command("report")
@store_option()
@click.option("--figures", "fig_dir", default="figures", show_default=True, type=click.Path(file_okay=False),
              help="Rendered figures (PNG) and the claims (claims-<preset>.json) to include, when the folder exists.")
@click.option("--out", default=None, type=click.Path(dir_okay=False),
              help="The HTML file (default: report_<store name>.html beside the store).")
@tau_option()
@click.option("--device", default="auto", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON on stdout.")
@data_root_option
@model_factory_options[0]
@model_factory_options[1]
def report_cmd(store, fig_dir, out, tau, device, as_json):
    """Write one self-contained HTML page for a run store: runs table, each run's metrics over
    rounds and last-round representation measures, the figures and the claims table."""
    from ..store import find_runs
    from .selection import warn
    from ..analysis.run_rows import COLUMNS, cell, row

    if not (tau > 0):
        raise CollapseLabError(f"--tau must be > 0 (got {tau})")
    runs = [r for r in find_runs(Path(store), warn) if r.meta.get("status") == "complete"]
    if not runs:
        raise CollapseLabError(f"no complete runs in {store}; train some first (collapse-lab train --store {store})")
    out = Path(out) if out else Path(store).resolve().parent / f"report_{Path(store).resolve().name}.html"
    fs = feature_source(device=device)
    parts, numbers = [], []
    rows = [row(r) for r in runs]
    parts.append("<h2>Runs</h2>" + table(list(COLUMNS), [[cell(r, c) for c in COLUMNS] for r in rows]))
    for i, run in enumerate(runs, 1):
        click.echo(f"report: run {i}/{len(runs)} {run.path.name}", err=True)
        nums, part = run_section(run, fs, tau)
        layer_nums, layer_part = layers_section(run, fs, tau) if "error" not in nums else ([], "")
        numbers.append({"run": run.path.name, **nums, "layers": layer_nums})
        parts.append(part + layer_part)
    figs = sorted(Path(fig_dir).glob("*.png")) if Path(fig_dir).is_dir() else []
    if figs:
        parts.append("<h2>Figures</h2>" + "".join(
            f"<h3>{html.escape(p.stem)}</h3><img alt='{html.escape(p.stem)}' src='data:image/png;base64,"
            f"{base64.b64encode(p.read_bytes()).decode()}'>" for p in figs))
    rows = []
    for preset in ("quick", "cpu", "paper"):  # the claims figures checked, per preset
        got = claims_rows(Path(fig_dir) / f"claims-{preset}.json")
        rows += [r + [preset] for r in got[1]] if got else []
    claims = (["entry", "claim", "measured", "holds", "preset"], rows) if rows else None
    if claims:
        parts.append("<h2>Claims</h2>" + table(*claims))
    page = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>collapse-lab report: "
            f"{html.escape(str(store))}</title>{STYLE}</head><body><h1>collapse-lab report</h1>"
            f"<p>store {html.escape(str(Path(store).resolve()))}, {len(runs)} complete run(s), "
            f"written {time.strftime('%Y-%m-%d %H:%M')}</p>" + "".join(parts) + SELF_CHECK + "</body></html>")
    write_bytes(out, page.encode())  # atomic, with the umask's mode; its folder made (and removed if it fails)
    if as_json:
        click.echo(json.dumps({"report": str(out), "bytes": out.stat().st_size, "runs": numbers,
                               "figures": [str(p) for p in figs]}, indent=1))
    else:
        click.echo(f"report: {out} ({out.stat().st_size / 1e6:.2f} MB, {len(runs)} run(s), {len(figs)} figure(s))")
