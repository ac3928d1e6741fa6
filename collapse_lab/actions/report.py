"""One self-contained HTML page per run store, readable offline (``collapse-lab report``;
``analysis.report_page``): the runs, their metrics over rounds, their last round's
representation measures, the rendered figures and the claims."""
from __future__ import annotations


from ..errors import CollapseLabError
from ..spectra.constants import DEFAULT_TAU
from .selection import features_of, say_stderr, warn_stderr



def report(store="checkpoints", *, figures="figures", html=None, tau=DEFAULT_TAU, device="auto", data_root=None,
           model_factory=None, layer=None, say=say_stderr, warn=warn_stderr) -> dict:
    """Write the page of ``store``'s complete runs, with ``figures``' PNGs and claims, to
    ``html`` (default: report_<store name>.html beside the store): {"report": its path,
    "bytes", "runs": each run's numbers, "figures": those included}."""
    from ..analysis.report_page import write_report

    if not (tau > 0):
        raise CollapseLabError(f"--tau must be > 0 (got {tau})")
    return write_report(store, figures, html, tau, features_of(data_root, model_factory, layer, device=device),
                        say=say, warn=warn)
