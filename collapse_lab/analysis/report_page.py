"""The report (``collapse-lab report``): one self-contained HTML page per run store, readable offline.

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
import json
import time
from pathlib import Path
from typing import Callable

from ..errors import CollapseLabError
from ..files import write_bytes
from .report_runs import table
from .select import quiet

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


def claims_rows(path: Path) -> tuple[list[str], list[list[str]]] | None:
    """The claims ``figures`` checked, read from the ``claims-<preset>.json`` it writes beside
    CLAIMS-<preset>.md (the JSON, not the Markdown made from it), as header and rows."""
    if not path.is_file():
        return None
    try:
        records = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    from ..judging.seeds import verdict_text

    rows = [[rec["entry"], c["text"], str(c["measured"]), str(c.get("over_seeds") or ""),
             verdict_text(c).replace("**", "")]
            for rec in records if isinstance(rec, dict) for c in rec.get("claims", [])]
    return (CLAIM_COLUMNS, rows) if rows else None


CLAIM_COLUMNS = ["entry", "claim", "measured (seed means)", "over seeds: mean [95 % interval]", "verdict"]


def write_report(store, fig_dir="figures", out=None, tau: float = 0.01, fs=None, say: Callable[[str], None] = quiet,
                 warn: Callable[[str], None] = quiet) -> dict:
    """Write the page for ``store``'s complete runs (with ``fig_dir``'s PNGs and claims) to
    ``out`` (default: report_<store name>.html beside the store); its path, size, each run's
    numbers and the figures included. ``fs``: the ``FeatureSource`` (default: CPU, test set)."""
    from .features import FeatureSource
    from .report_runs import layers_section, run_section
    from .run_rows import COLUMNS, cell, row
    from ..store import find_runs

    if not (tau > 0):
        raise CollapseLabError(f"--tau must be > 0 (got {tau})")
    runs = [r for r in find_runs(Path(store), warn) if r.meta.get("status") == "complete"]
    if not runs:
        raise CollapseLabError(f"no complete runs in {store}; train some first (collapse-lab train --store {store})")
    out = Path(out) if out else Path(store).resolve().parent / f"report_{Path(store).resolve().name}.html"
    fs = fs or FeatureSource()
    parts, numbers = [], []
    rows = [row(r) for r in runs]
    parts.append("<h2>Runs</h2>" + table(list(COLUMNS), [[cell(r, c) for c in COLUMNS] for r in rows]))
    for i, run in enumerate(runs, 1):
        say(f"report: run {i}/{len(runs)} {run.path.name}")
        nums, part = run_section(run, fs, tau, warn)
        layer_nums, layer_part = layers_section(run, fs, tau) if "error" not in nums else ([], "")
        numbers.append({"run": run.path.name, **nums, "layers": layer_nums})
        parts.append(part + layer_part)
    from .report_runs import summary_section

    parts.insert(0, summary_section(runs, numbers))  # the page opens with the store across its settings
    figs = sorted(Path(fig_dir).glob("*.png")) if Path(fig_dir).is_dir() else []
    if figs:
        parts.append("<h2>Figures</h2>" + "".join(
            f"<h3>{html.escape(p.stem)}</h3><img alt='{html.escape(p.stem)}' src='data:image/png;base64,"
            f"{base64.b64encode(p.read_bytes()).decode()}'>" for p in figs))
    rows = []
    for preset in ("quick", "cpu", "paper"):  # the claims figures checked, per preset
        got = claims_rows(Path(fig_dir) / f"claims-{preset}.json")
        rows += [r + [preset] for r in got[1]] if got else []
    claims = (CLAIM_COLUMNS + ["preset"], rows) if rows else None
    if claims:
        parts.append("<h2>Claims</h2>" + table(*claims))
    page = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>collapse-lab report: "
            f"{html.escape(str(store))}</title>{STYLE}</head><body><h1>collapse-lab report</h1>"
            f"<p>store {html.escape(str(Path(store).resolve()))}, {len(runs)} complete run(s), "
            f"written {time.strftime('%Y-%m-%d %H:%M')}</p>" + "".join(parts) + SELF_CHECK + "</body></html>")
    write_bytes(out, page.encode())  # atomic, with the umask's mode; its folder made (and removed if it fails)
    return {"report": str(out), "bytes": out.stat().st_size, "runs": numbers, "figures": [str(p) for p in figs]}
