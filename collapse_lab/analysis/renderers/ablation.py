"""A hyper-parameter ablation (ICLR Fig. 5, journal Fig. 9: FedDecorr's beta): final test
accuracy (%) of the global model against ``x`` (a run field, e.g. beta), one panel per
``panels`` entry, mean +- std over seeds. ``baseline``: a ``where`` selecting the runs
drawn at x = 0 (FedAvg without the regularizer), when the spec includes them.

Metric per point: the mean accuracy over the last 10 % of rounds (``final``)."""
from __future__ import annotations

import numpy as np

from .. import RENDERERS
from ..context import Context
from ..plots.style import LABELS, entry_panels, finish_entry, palette
from .accuracy import accuracy_curve, tail_mean


def final_accuracy(run) -> float:
    return tail_mean(accuracy_curve(run)[1])


class Ablation:
    metrics = ("best_x",)  # what each series' ``metrics`` holds (the claims' names)
    @staticmethod
    def compute(entry, ctx: Context) -> dict:
        p = entry.params
        field = p["x"]
        panels = []
        for spec in p["panels"]:
            pts = []
            for g in ctx.groups(entry, spec.get("where")):
                if p.get("baseline") and all(str(g.get(k)) == str(v) for k, v in p["baseline"].items()):
                    xv = 0.0
                else:
                    xv = float(g.get(field))
                accs = [final_accuracy(run) for run in g.runs]
                pts.append((xv, float(np.mean(accs)), float(np.std(accs)) if len(accs) > 1 else None, len(accs),
                            [run.path.name for run in g.runs]))
            pts.sort()
            series = [{"label": spec.get("title", ""), "key": {}, "x": [q[0] for q in pts], "y": [q[1] for q in pts],
                       "y_std": [q[2] or 0.0 for q in pts] if any(q[2] is not None for q in pts) else None,
                       "n": min(q[3] for q in pts), "runs": [r for q in pts for r in q[4]],
                       "metrics": {"best_x": pts[int(np.argmax([q[1] for q in pts]))][0]}}]
            panels.append({"title": spec.get("title", ""), "series": series})
        return {"panels": panels}

    @staticmethod
    def draw(values: dict, entry):
        fig, panels = entry_panels(values, entry)
        for ax, panel in panels:
            s = panel["series"][0]
            ax.errorbar(s["x"], s["y"], yerr=s["y_std"], marker="o", color=palette(1)[0], capsize=2, linewidth=1.4)
            ax.set_xlabel(LABELS.get(entry.params["x"], entry.params["x"]))
            ax.set_ylabel(LABELS["acc"])
            ax.set_title(panel["title"], fontsize=8)
        return finish_entry(fig, entry, values, "error bars")


RENDERERS.register("ablation", kind="figure")(Ablation)
