"""Alignment of the singular spaces of W_{L+1}(t) and Pi(t) (ICLR Fig. 6, App. A.3): a
deep linear network trained by full-batch gradient descent on the summed cross-entropy
(``theory.linear_flow.simulate``, centralised, no partition); at each inspected epoch the
matrix |u_k(t)^T v_{L+1,k'}(t)| for the leading k, k' (up to the class count), rows k'.

Params: ``dataset`` (digits: 64-d inputs for MNIST's 784), ``depth`` (L, the layers of Pi:
2 gives the paper's 3-layer network), ``width``, ``eta``, ``steps``, ``epochs`` (the
inspected ones, e.g. [3, 5, 7, 9]: step t * steps / max(epochs)), ``scale``, ``seed``.
Metrics per epoch: ``diag`` and ``offdiag`` means of the matrix."""
from __future__ import annotations

import numpy as np
import torch

from .. import RENDERERS
from ..context import Context
from ..plots.style import figure, finish


class Alignment:
    metrics = ("diag", "offdiag")  # what each series' ``metrics`` holds (the claims' names)
    @staticmethod
    def compute(entry, ctx: Context) -> dict:
        from ...data import load_dataset
        from ..theory.linear_flow import simulate

        p = entry.params
        ds = load_dataset(p.get("dataset", "digits"))
        x = ds.to_float(ds.train_x).flatten(1).to(torch.float64).T.contiguous()
        epochs = [int(e) for e in p.get("epochs", [3, 5, 7, 9])]
        steps = int(p.get("steps", 2000))
        res = simulate(x, ds.train_y, ds.num_classes, int(p.get("depth", 2)), int(p.get("width", 32)),
                       float(p.get("scale", 0.3)), float(p.get("eta", 2e-4)), steps, records=2,
                       align_at=tuple(e / max(epochs) for e in epochs), seed=int(p.get("seed", 0)))
        panels, summary = [], []
        for e, (t, m) in zip(epochs, sorted(res.alignment.items())):
            m = np.asarray(m)
            n = min(m.shape)
            diag = float(np.mean(np.diag(m)[:n]))
            off = float((m[:n, :n].sum() - np.trace(m[:n, :n])) / max(n * n - n, 1))
            panels.append({"title": f"epoch {e}", "matrix": m.tolist(), "series": []})
            summary.append({"label": f"epoch {e}", "key": {"epoch": e}, "x": [], "y": [], "y_std": None, "n": 1,
                            "metrics": {"diag": diag, "offdiag": off}})
        panels.append({"title": "summary", "series": summary, "draw": False})
        return {"panels": panels}

    @staticmethod
    def draw(values: dict, entry):
        drawn = [p for p in values["panels"] if p.get("draw", True)]
        fig, axes = figure(len(drawn), entry.params.get("cols", 4))
        for ax, panel in zip(axes, drawn):
            im = ax.imshow(np.asarray(panel["matrix"]), cmap="Greys", vmin=0, vmax=1)
            ax.set_title(panel["title"], fontsize=8)
            ax.set_xlabel("k (left singular vectors of Π)")
            ax.set_ylabel("k' (right s.v. of W_{L+1})")
            ax.grid(False)
        fig.colorbar(im, ax=axes, shrink=0.7)
        return finish(fig, "; ".join(entry.differs))


RENDERERS.register("alignment", kind="figure")(Alignment)
