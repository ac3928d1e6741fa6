"""collapse-lab: dimensional collapse of representations in heterogeneous federated learning.

The Python API (docs/api.md), imported on first use so that ``import collapse_lab`` stays
light::

    import collapse_lab as cl
    runs = cl.open_store("checkpoints", alpha="0.05")
    sv, floor = cl.spectrum(runs[0].features())
    cl.measures(sv, floor, z=runs[0].features())
"""

__version__ = "0.1.0"

# name -> (module, attribute): the stable surface of the API
_API = {
    "Run": ("api", "Run"), "open_run": ("api", "open_run"), "open_store": ("api", "open_store"),
    "train": ("api", "train"), "configs": ("api", "configs"),
    "figures": ("actions.figures", "figures"), "tables": ("actions.figures", "tables"), "import_run": ("importer", "import_run"), "RunConfig": ("config", "RunConfig"),
    "RunWriter": ("store.writer", "RunWriter"), "CollapseLabError": ("errors", "CollapseLabError"),
    "features": ("analysis.features.hooks", "features"),
    "spectrum": ("spectra.functional", "spectrum"), "covariance": ("spectra.functional", "covariance"),
    "n_significant": ("spectra.functional", "n_significant"), "effective_rank": ("spectra.functional", "effective_rank"),
    "local_global_gap": ("spectra.functional", "local_global_gap"), "measures": ("spectra.measures", "measures"),
    "dead_units": ("spectra.rank", "dead_units"), "rankme": ("spectra.rank", "rankme"),
    "stable_rank": ("spectra.rank", "stable_rank"), "alpha_req": ("spectra.rank", "alpha_req"),
    "linear_cka": ("spectra.cka", "linear_cka"), "cka_matrix": ("spectra.cka", "cka_matrix"),
    "neural_collapse": ("spectra.neural_collapse", "neural_collapse"),
    "Curve": ("analysis.plots.spectrum", "Curve"), "plot_spectrum": ("analysis.plots.spectrum", "plot_spectrum"),
    "plot_compare": ("analysis.plots.spectrum", "plot_compare"),
    "plot_series": ("analysis.plots.rounds", "plot_series"),
    "plot_spectra_over_rounds": ("analysis.plots.rounds", "plot_spectra_over_rounds"),
    "plot_matrix": ("analysis.plots.similarity", "plot_matrix"),
}
__all__ = sorted(_API)


def __getattr__(name: str):
    if name not in _API:
        raise AttributeError(f"module 'collapse_lab' has no attribute {name!r}")
    import importlib

    module, attr = _API[name]
    value = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted([*globals(), *_API])
