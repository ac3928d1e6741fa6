"""Covariance spectra (FedDecorr ICLR Fig. 2, 3, 7-10; journal Fig. 2, 3, 5, 7): per panel
(global model, or client k's local model, of the runs matching the panel's ``where``) one
curve per configuration, the top-k singular values of the covariance of the test
representations on a log10 axis, mean +- std over seeds.

Params: ``panels`` [{title, model: global|client, client: k, where: {field: value}}],
``top`` (100, or the representation dimension when smaller), ``tau`` (0.01: log10 tau =
-2, the paper's), ``round`` (default the last), ``cols``.

Metrics per curve (means over seeds): ``n_sig`` (singular values above tau), ``erank``
(effective rank), ``tail_mean`` (mean log10 singular value over the tail half of the
top-k), ``top`` (the k plotted).
"""
from __future__ import annotations

from ...spectra.functional import DEFAULT_TAU, effective_rank, log10_mean_std, n_significant
from .. import RENDERERS
from ..select import panel_labels
from ..context import Context, last_round
from ..plots.spectrum import Curve, plot_spectrum
from ..plots.style import figure, finish, spread_note, palette


def spectrum_series(ctx: Context, entry, panel: dict, top: int, tau: float, r: int | None) -> list[dict]:
    client = panel.get("client", 0) if panel.get("model", "global") == "client" else None
    out = []
    for g, lab in zip(gs := ctx.groups(entry, panel.get("where")), panel_labels(gs)):
        svs, floors, n_sig, erank = [], [], [], []
        for run in g.runs:
            sv, floor = ctx.spectrum(run, last_round(run, r), client)
            svs.append(sv)
            floors.append(floor)
            n_sig.append(n_significant(sv[:top], tau))
            erank.append(effective_rank(sv, floor))
        k = min(top, *(len(s) for s in svs))
        mean, std = log10_mean_std(svs, floors, k)
        y = mean.tolist()
        half = y[k // 2:]
        out.append({"label": lab, "key": g.key, "x": list(range(1, k + 1)), "y": y,
                    "y_std": std.tolist() if len(svs) > 1 else None, "n": len(svs),
                    "runs": [run.path.name for run in g.runs],
                    "metrics": {"n_sig": sum(n_sig) / len(n_sig), "erank": sum(erank) / len(erank),
                                "tail_mean": sum(half) / max(len(half), 1), "top": k}})
    return out


class Spectra:
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
        fig, axes = figure(len(values["panels"]), entry.params.get("cols"))
        for ax, panel in zip(axes, values["panels"]):
            curves = [Curve(s["label"] + (f" (n={s['n']})" if s["n"] > 1 else ""), color=c, mean=s["y"], std=s["y_std"])
                      for s, c in zip(panel["series"], palette(len(panel["series"])))]
            plot_spectrum(ax, curves, top=max((len(s["y"]) for s in panel["series"]), default=0), tau=panel["tau"],
                          title=panel["title"])
        return finish(fig, "; ".join(t for t in (*entry.differs, spread_note(values, "bands")) if t))


RENDERERS.register("spectra", kind="figure")(Spectra)
