"""Covariance spectra (FedDecorr ICLR Fig. 2, 3, 7-10; journal Fig. 2, 3, 5, 7): per panel
(global model, or client k's local model, of the runs matching the panel's ``where``) one
curve per configuration, the top-k singular values of the covariance of the test
representations on a log10 axis, mean +- std over seeds.

Params: ``panels`` [{title, model: global|client, client: k, where: {field: value}}],
``top`` (100, or the representation dimension when smaller), ``tau`` (0.01: log10 tau =
-2, the paper's), ``round`` (default the last), ``cols``.

Metrics per curve (means over seeds): the registered measures of ``CLAIMED``
(``spectra.measures``: the literal counts and tail of FedDecorr Fig. 2-3 and their
scale-free forms) and ``top`` (the k plotted).
"""
from __future__ import annotations

from ...spectra.functional import DEFAULT_TAU, log10_mean_std
from ...spectra.measures import Inputs, value
from .. import RENDERERS
from ..select import panel_labels
from ..context import Context, last_round
from ..plots.spectrum import Curve, plot_spectrum
from ..plots.style import entry_panels, finish_entry, palette


def spectrum_series(ctx: Context, entry, panel: dict, top: int, tau: float, r: int | None) -> list[dict]:
    client = panel.get("client", 0) if panel.get("model", "global") == "client" else None
    out = []
    for g, lab in zip(gs := ctx.groups(entry, panel.get("where")), panel_labels(gs)):
        svs, floors, per_run = [], [], {m: [] for m in CLAIMED}
        for run in g.runs:
            sv, floor = ctx.spectrum(run, last_round(run, r), client)
            svs.append(sv)
            floors.append(floor)
            for m in CLAIMED:
                per_run[m].append(value(m, Inputs(sv, floor, tau, top)))
        k = min(top, *(len(s) for s in svs))
        mean, std = log10_mean_std(svs, floors, k)
        out.append({"label": lab, "key": g.key, "x": list(range(1, k + 1)), "y": mean.tolist(),
                    "y_std": std.tolist() if len(svs) > 1 else None, "n": len(svs),
                    "runs": [run.path.name for run in g.runs],
                    "metrics": {**{m: sum(v) / len(v) for m, v in per_run.items()}, "top": k,
                                **({"classes": int(g.runs[0].meta["num_classes"])}
                                   if g.runs and g.runs[0].meta.get("num_classes") else {})}})
    return out


# the measures a spectra entry's claims may read: FedDecorr Fig. 2-3's literal forms (the count
# above tau, the tail's mean log10) and their scale-free forms (docs/scale.md "The claims' forms")
CLAIMED = ("n_significant_top", "n_relative_top", "effective_rank", "tail_mean", "tail_share")


class Spectra:
    metrics = (*CLAIMED, "top")
    @staticmethod
    def compute(entry, ctx: Context) -> dict:
        p = entry.params
        top, tau = int(p.get("top", 100)), float(p.get("tau", DEFAULT_TAU))
        panels = [{"title": panel.get("title", ""), "tau": tau,
                   "series": spectrum_series(ctx, entry, panel, top, tau, p.get("round"))}
                  for panel in p.get("panels", [{"title": "global model"}])]
        return {"panels": panels}

    @staticmethod
    def draw(values: dict, entry):
        fig, panels = entry_panels(values, entry)
        for ax, panel in panels:
            curves = [Curve(s["label"] + (f" (n={s['n']})" if s["n"] > 1 else ""), color=c, mean=s["y"], std=s["y_std"])
                      for s, c in zip(panel["series"], palette(len(panel["series"])))]
            plot_spectrum(ax, curves, top=max((len(s["y"]) for s in panel["series"]), default=0), tau=panel["tau"],
                          title=panel["title"])
        return finish_entry(fig, entry, values, "bands")


RENDERERS.register("spectra", kind="figure")(Spectra)
