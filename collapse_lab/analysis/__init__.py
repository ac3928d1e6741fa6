"""The figure and table catalogue: one YAML spec per figure or table of the five papers
(``specs/<entry>.yaml``), the renderers that draw them and the checks that test their
claims in numbers. Beside the training subsystem: it reads the run store (through ``features`` and
``spectra``) and renders the runs the catalogue's plan (``collapse_lab.plan``) hands it.

A spec (``catalogue.Entry``)::

    name: feddecorr-fig2            # the file's stem
    paper: FedDecorr (ICLR 2023)
    source: "§3.1, Fig. 2"
    kind: figure                    # or table
    caption: ...
    renderer: spectra               # a registered renderer (``RENDERERS``)
    runs:                           # per preset: a sweep spec (base x grid x seeds)
      quick: {base: {...}, grid: {alpha: [0.01, 0.05, 0.25, inf]}, seeds: [0]}
      paper: {...}
    params: {...}                   # the renderer's own (panels, curves, top-k, tau, round)
    claims:                         # each a registered check (``CHECKS``) with its threshold
      - {text: "...", check: order, ...}
    differs: [...]                  # what the quick form changes from the paper (said in the legend)

A renderer is one file in ``renderers/`` registering ``compute(entry, ctx) -> values``
(plain numbers: what is drawn, JSON-able) and ``draw(values, entry) -> figure``, and
declaring ``metrics``, the names of the numbers each series carries (the registered
measures of ``spectra.measures`` by their names, and its own); the claims read the values
by those names, so what is checked is exactly what is plotted.
"""
from __future__ import annotations

from ..registry import Registry


def _check_renderer(name, obj, info) -> None:
    for attr in ("compute", "draw"):
        if not callable(getattr(obj, attr, None)):
            raise TypeError(f"renderer {name}: needs a {attr}() function")
    metrics = getattr(obj, "metrics", None)
    if not isinstance(metrics, tuple) or not all(isinstance(m, str) for m in metrics):
        raise TypeError(f"renderer {name}: declare ``metrics``, the names its series' metrics hold (a tuple)")


RENDERERS: Registry = Registry("renderer", "collapse_lab.analysis.renderers", flag="renderer", check=_check_renderer)

__all__ = ["RENDERERS"]
