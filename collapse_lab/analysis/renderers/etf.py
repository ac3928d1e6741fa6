"""FedETF's fixed classifier (FedETF Fig. 3 is a schematic; what it depicts is checkable):
the random simplex ETF W* = sqrt(C/(C-1)) P (I - 11^T/C) the ``fedetf`` method builds,
drawn as its matrix of pairwise cosines. Metrics: the largest deviation of a column norm
from 1 and of an off-diagonal cosine from -1/(C-1)."""
from __future__ import annotations

import numpy as np
import torch

from ...linalg import simplex_etf
from .. import RENDERERS
from ..context import Context
from ..plots.style import figure, finish


class ETF:
    metrics = ("norm_error", "cos_error")  # what each series' ``metrics`` holds (the claims' names)
    @staticmethod
    def compute(entry, ctx: Context) -> dict:
        p = entry.params
        panels = []
        for d, c in p.get("shapes", [[128, 10]]):
            w = simplex_etf(int(d), int(c), torch.Generator().manual_seed(int(p.get("seed", 0)))).to(torch.float64)
            cols = w if w.shape == (int(d), int(c)) else w.T  # d x C
            norms = cols.norm(dim=0)
            cos = (cols.T @ cols) / torch.outer(norms, norms)
            off = cos[~torch.eye(int(c), dtype=torch.bool)]
            panels.append({"title": f"simplex ETF, d = {d}, C = {c}", "matrix": cos.tolist(),
                           "series": [{"label": f"C = {c}", "key": {"C": c}, "x": [], "y": [], "y_std": None, "n": 1,
                                       "metrics": {"norm_error": float((norms - 1).abs().max()),
                                                   "cos_error": float((off + 1 / (int(c) - 1)).abs().max())}}]})
        return {"panels": panels}

    @staticmethod
    def draw(values: dict, entry):
        fig, axes = figure(len(values["panels"]))
        for ax, panel in zip(axes, values["panels"]):
            im = ax.imshow(np.asarray(panel["matrix"]), cmap="RdBu_r", vmin=-1, vmax=1)
            ax.set_title(panel["title"], fontsize=8)
            ax.set_xlabel("class")
            ax.set_ylabel("class")
            ax.grid(False)
            fig.colorbar(im, ax=ax, shrink=0.8, label="cosine")
        return finish(fig, "; ".join(entry.differs))


RENDERERS.register("etf", kind="figure")(ETF)
