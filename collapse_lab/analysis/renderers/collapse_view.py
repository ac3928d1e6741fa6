"""FedDecorr Fig. 1 (and journal Fig. 1): (a) the clients x classes sample counts of a
heterogeneous partition; (b)-(d) the test representations of global models trained on
homogeneous data, heterogeneous data, and heterogeneous data with FedDecorr, normalised to
the unit sphere and shown in their first three principal components (the paper's
ResNet20 has a 64-d z and does not say how it reached 3-D: we project the L2-normalised
features onto their top-3 principal axes; the points are coloured by class).

Params: ``heatmap`` (a ``where`` naming the run whose partition is drawn), ``scatter``
[{title, where}]. Metrics per scatter: the measures ``effective_rank`` and ``n_significant``
(every singular value above tau) of the covariance of the (unnormalised) representations,
the quantities the claim compares."""
from __future__ import annotations

import numpy as np
import torch

from ...spectra.functional import DEFAULT_TAU
from ...spectra.measures import Inputs, value
from .. import RENDERERS
from ..context import Context, last_round
from ..plots.style import figure, finish


def sphere_pca(z: torch.Tensor, dims: int = 3) -> np.ndarray:
    """The L2-normalised rows of z projected on their top ``dims`` principal axes."""
    u = z.to(torch.float64)
    u = u / u.norm(dim=1, keepdim=True).clamp_min(1e-12)
    uc = u - u.mean(0)
    _, _, vh = torch.linalg.svd(uc, full_matrices=False)
    return (uc @ vh[:dims].T).numpy()


class CollapseView:
    metrics = ("effective_rank", "n_significant")
    @staticmethod
    def compute(entry, ctx: Context) -> dict:
        p = entry.params
        (hg,) = ctx.groups(entry, p["heatmap"])
        counts = hg.runs[0].partition().counts
        panels = [{"title": f"(a) samples per class ({hg.label})", "counts": np.asarray(counts).tolist(), "series": []}]
        for spec in p["scatter"]:
            (g,) = ctx.groups(entry, spec["where"])
            run = g.runs[0]
            z = ctx.features.features(run, last_round(run), None)
            ds, _ = ctx.features.dataset(run.config)
            sv, floor = ctx.spectrum(run, last_round(run), None)
            panels.append({"title": spec["title"], "points": sphere_pca(z).round(4).tolist(),
                           "labels": ds.test_y.tolist(),
                           "series": [{"label": g.label, "key": g.key, "x": [], "y": [], "y_std": None, "n": 1,
                                       "runs": [run.path.name],
                                       "metrics": {m: value(m, Inputs(sv, floor, DEFAULT_TAU))
                                                   for m in ("effective_rank", "n_significant")}}]})
        panels.append({"title": "summary", "draw": False,
                       "series": [s for q in panels[1:] for s in q["series"]]})
        return {"panels": panels}

    @staticmethod
    def draw(values: dict, entry):
        import matplotlib.pyplot as plt
        import seaborn as sns

        drawn = [p for p in values["panels"] if p.get("draw", True)]
        fig, axes = figure(len(drawn), entry.params.get("cols", 4))
        heat = drawn[0]
        sns.heatmap(np.asarray(heat["counts"]), ax=axes[0], cmap="Blues", cbar=True, linewidths=0)
        axes[0].set_xlabel("class")
        axes[0].set_ylabel("client")
        axes[0].set_title(heat["title"], fontsize=7)
        for i, panel in enumerate(drawn[1:], start=1):
            pos = axes[i].get_position()
            axes[i].remove()
            ax = fig.add_subplot(1, len(drawn), i + 1, projection="3d")
            pts, lab = np.asarray(panel["points"]), np.asarray(panel["labels"])
            ax.scatter(pts[:, 0], pts[:, 1], pts[:, 2], c=lab, cmap="tab10", s=2, alpha=0.7, linewidths=0)
            s = panel["series"][0]["metrics"]
            ax.set_title(f"{panel['title']}\neff. rank {s['effective_rank']:.1f}", fontsize=7)
            ax.set_xticklabels([])
            ax.set_yticklabels([])
            ax.set_zticklabels([])
            del pos
        plt.subplots_adjust(wspace=0.3)
        return finish(fig, "; ".join(entry.differs))


RENDERERS.register("collapse_view", kind="figure")(CollapseView)
