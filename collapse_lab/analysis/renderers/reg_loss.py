"""How the FedDecorr loss evolves within the local epochs (ICLR Fig. 11): for one run and
round, each client's regularizer term per local epoch (the sample-weighted mean of R(z)
over the epoch's batches, from the run's ``local_epoch`` records, before beta)."""
from __future__ import annotations

from .. import RENDERERS
from ..context import Context
from ..plots.style import LABELS, figure, finish, palette


class RegLoss:
    metrics = ("first", "last")  # what each series' ``metrics`` holds (the claims' names)
    @staticmethod
    def compute(entry, ctx: Context) -> dict:
        p = entry.params
        (g,) = ctx.groups(entry, p.get("where"))
        run = g.runs[0]
        r = int(p.get("round", run.meta["rounds_complete"]))
        per = {}
        for e in run.metrics():
            if e.get("event") == "local_epoch" and int(e["round"]) == r:
                per.setdefault(int(e["client"]), []).append((int(e["epoch"]), float(e["reg"])))
        series = []
        for k in sorted(per):
            pts = sorted(per[k])
            series.append({"label": f"client {k}", "key": {"client": k}, "x": [q[0] for q in pts],
                           "y": [q[1] for q in pts], "y_std": None, "n": 1, "metrics": {"first": pts[0][1],
                                                                                          "last": pts[-1][1]}})
        return {"panels": [{"title": f"round {r}, {run.path.name[:40]}", "series": series}], "run": run.path.name}

    @staticmethod
    def draw(values: dict, entry):
        fig, (ax,) = figure(1)
        panel = values["panels"][0]
        for s, c in zip(panel["series"], palette(len(panel["series"]))):
            ax.plot(s["x"], s["y"], marker=".", color=c, label=s["label"], linewidth=1.2)
        ax.set_xlabel(LABELS["epoch"])
        ax.set_ylabel(LABELS["reg"])
        ax.set_title(panel["title"], fontsize=7)
        ax.legend(fontsize=5, frameon=False, ncol=2)
        return finish(fig, "; ".join(entry.differs))


RENDERERS.register("reg_loss", kind="figure")(RegLoss)
