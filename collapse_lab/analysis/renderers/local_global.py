"""Local vs global spectra with the gap R in the corner (journal Fig. 4 and 6, Eq. 1):
one panel per configuration (the runs matching each ``panels`` entry's ``where``), client
k's local model and the global model of the same round.

R = (1/K) sum_k log10(lambda_k^(l) / lambda_k^(g)) (``spectra.functional.local_global_gap``):
reported over the top ``top`` indices (``R_top``) and over the leading indices above both
numerical floors (``R_floor``); the paper's K is "the total number of singular values",
which for d = 1280 would let the round-off tail decide R. ``below_share``: the share of
k <= top where the global value is below the local one. The last panel of the values is a
summary (not drawn) with one series per configuration holding these metrics, so claims
can order R over alpha.
"""
from __future__ import annotations

import numpy as np

from ...spectra.functional import log10_mean_std
from ...spectra.measures import Inputs, value
from .. import RENDERERS
from ..context import Context, last_round
from ..plots.style import LABELS, band, decorate, figure, finish_entry, palette


class LocalGlobal:
    metrics = ("R_top", "R_floor", "below_share", "top")  # what each series' ``metrics`` holds (the claims' names)
    @staticmethod
    def compute(entry, ctx: Context) -> dict:
        p = entry.params
        top, client = int(p.get("top", 100)), int(p.get("client", 0))
        panels, summary = [], []
        for spec in p["panels"]:
            for g in ctx.groups(entry, spec.get("where")):
                loc, glo, r_top, r_floor, below = [], [], [], [], []
                for run in g.runs:
                    r = last_round(run, p.get("round"))
                    sl, fl = ctx.spectrum(run, r, client)
                    sg, fg = ctx.spectrum(run, r, None)
                    loc.append((sl, fl))
                    glo.append((sg, fg))
                    both = Inputs(sl, fl, top=top, other=sg, other_floor=fg)
                    r_top.append(value("R_top", both))
                    r_floor.append(value("R_floor", both))
                    below.append(value("below_share", both))
                k = min(top, *(len(s) for s, _ in loc + glo))
                series = []
                for name, pairs in ((f"local (client {client})", loc), ("global", glo)):
                    mean, std = log10_mean_std([s for s, _ in pairs], [f for _, f in pairs], k)
                    series.append({"label": name, "key": {**g.key, "model": name}, "x": list(range(1, k + 1)),
                                   "y": mean.tolist(), "y_std": std.tolist() if len(pairs) > 1 else None,
                                   "n": len(pairs), "metrics": {}})
                metrics = {"R_top": float(np.mean(r_top)), "R_floor": float(np.mean(r_floor)),
                           "below_share": float(np.mean(below)), "top": k}
                panels.append({"title": spec.get("title", g.label).format(label=g.label), "series": series,
                               "metrics": metrics, "runs": [run.path.name for run in g.runs]})
                summary.append({"label": g.label, "key": g.key, "x": [], "y": [], "y_std": None, "n": len(g.runs),
                                "metrics": metrics})
        panels.append({"title": "summary", "series": summary, "draw": False})
        return {"panels": panels}

    @staticmethod
    def draw(values: dict, entry):
        drawn = [p for p in values["panels"] if p.get("draw", True)]
        fig, axes = figure(len(drawn), entry.params.get("cols"))
        for ax, panel in zip(axes, drawn):
            for s, c in zip(panel["series"], palette(2)):
                band(ax, s["x"], s["y"], s["y_std"], s["label"], c)
            m = panel["metrics"]
            # R under the title, not in a box on the curves: a box hid part of the top grid
            # line, which then read as a short stray series
            title = f"{panel['title']}\nR = {m['R_top']:.3f} (top {m['top']}), {m['R_floor']:.3f} (above floor)"
            decorate(ax, LABELS["k"], LABELS["log_sv"], title, loc="lower left")
        return finish_entry(fig, entry, values, "bands")


RENDERERS.register("local_global", kind="figure")(LocalGlobal)
