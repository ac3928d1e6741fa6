"""A run's part of the report: its last round's numbers (the measures, NC1-NC4, CKA of the
stored clients with the global model), its panel, and where in the network collapse stands."""
from __future__ import annotations

import base64
import html
import io
from typing import Callable

from ..errors import CollapseLabError
from .select import quiet


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


def run_section(run, fs, tau: float, warn: Callable[[str], None] = quiet) -> tuple[dict, str]:
    """One run's numbers and its part of the page: the panel (accuracy, the probe's spectra,
    CKA) and the table of its last round's measures; a damaged run is said, not analysed."""
    from ..spectra.measures import REPORTED
    from .plots import plt
    from .plots.report import plot_run_panel
    from .plots.style import grid

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
    from ..spectra.measures import PER_LAYER
    from .run_log import HEATMAP, heatmap_rgb, layer_rows
    from .stored import model_layers

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


def summary_section(runs, numbers: list[dict]) -> str:
    """The page's opening: one row per setting (its runs differ only in the seed), named in
    words (method, regularizer, alpha, data set and model) rather than by folder hashes: the
    seeds, and the mean [min, max] over them of the final accuracy and the last round's
    effective rank and dead units of the global model."""
    from ..labels import label

    by: dict[str, list] = {}
    for run, nums in zip(runs, numbers):
        m = run.meta
        key = {"method": m.get("method"), "reg": m.get("reg"), "alpha": m.get("alpha"),
               **({"beta": m.get("beta")} if m.get("reg") not in (None, "none") else {})}
        name = f"{label(key)} ({m.get('dataset')}, {m.get('model')})"
        by.setdefault(name, []).append((run, nums))

    def spread(vals) -> str:
        vals = [v for v in vals if isinstance(v, (int, float))]
        if not vals:
            return ""
        mean = sum(vals) / len(vals)
        return f"{mean:.4g}" + (f" [{min(vals):.4g}, {max(vals):.4g}]" if len(vals) > 1 else "")

    rows = []
    for name, group in sorted(by.items()):
        accs = []
        for run, _ in group:
            ev = [e["test_acc"] for e in run.metrics() if e.get("event") == "round" and
                  isinstance(e.get("test_acc"), (int, float))]
            accs.append(ev[-1] if ev else None)
        rows.append([name, ", ".join(str(r.meta.get("seed")) for r, _ in group), spread(accs),
                     spread([n.get("effective_rank") for _, n in group]), spread([n.get("dead_units") for _, n in group])])
    return ("<h2>Summary by setting</h2><p>Each row is one setting; its runs differ only in the seed. Numbers are the "
            "mean [min, max] over the seeds at the last round.</p>"
            + table(["setting", "seeds", "final test accuracy", "effective rank (global)", "dead units (global)"], rows))
