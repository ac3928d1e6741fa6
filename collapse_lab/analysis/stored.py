"""What the commands that analyse stored runs compute alike: one model's spectrum (refused
where it would take hours), its numbers with the run, round and model they are of, a client's
checkpoint looked up, and a model's per-layer rows."""
from __future__ import annotations

import math
from typing import Callable

from ..errors import CollapseLabError
from ..spectra.functional import spectrum
from ..spectra.measures import layer_measures, measures

MAX_FEATURES = 8192  # a covariance spectrum of d features costs d^3: 8192 takes minutes, 32768 hours and 8.6 GB


def spectrum_of(z, fs=None):
    """``spectra.functional.spectrum`` of z, refused in one line where z is too wide to
    decompose (a convolutional layer flattened by --layer)."""
    d = int(z.shape[1])
    if d > MAX_FEATURES:
        layer = getattr(fs, "layer", None)
        raise CollapseLabError(f"--layer {layer}: {d} features an image; a covariance spectrum of more than "
                               f"{MAX_FEATURES} is refused (d^3 work: hours at this width); name a later or pooled "
                               "layer, or use `collapse-lab layers`, which pools a convolutional map per channel"
                               if layer else f"the representation has {d} features; a covariance spectrum of more "
                               f"than {MAX_FEATURES} is refused (d^3 work)")
    return spectrum(z)


def check_analysis_options(tau: float, client: int, top: int | None) -> None:
    """--tau, --client and --top of the commands that analyse stored runs."""
    if not (math.isfinite(tau) and tau > 0):
        raise CollapseLabError(f"--tau must be a finite number > 0 (got {tau}); the paper's is 0.01")
    if client < 0:
        raise CollapseLabError(f"--client must be >= 0 (got {client})")
    if top is not None and top < 1:
        raise CollapseLabError(f"--top must be >= 1 (got {top})")


def check_client(selected, k: int) -> None:
    """``--client k`` against every run's clients, before any work is shown."""
    for run in selected:
        clients = int(run.meta.get("clients", 0))
        if clients and k >= clients:
            raise CollapseLabError(f"--client {k}: {run.path.name} has clients 0..{clients - 1}")


def check_runs(selected, fs, client: int | None = None) -> None:
    """What an analysis needs of its runs, checked before any progress or warning is shown:
    the client asked, and a model collapse-lab builds (or ``--model-factory``'s)."""
    if client is not None:
        check_client(selected, client)
    check = getattr(fs, "check_buildable", None)
    for run in selected if check is not None else ():
        check(run.config)


def local_kept(run, r: int, k: int, warn: Callable[[str], None], warned: set | None = None) -> bool:
    """Whether client k's checkpoint of round r is stored; says so through ``warn`` (once per
    run in ``warned``) when not."""
    if run.has_client(r, k):
        return True
    check_client([run], k)
    if warned is not None:
        if run.path in warned:
            return False
        warned.add(run.path)
    source = run.meta.get("source")
    if isinstance(source, dict) and not source.get("client"):  # imported global models alone
        warn(f"{run.path.name} was imported without its clients' models (import --client-files); global model only")
    else:
        warn(f"{run.path.name} keeps no checkpoint of client {k} for round {r} (--keep-local "
             f"{run.meta.get('keep_local')}); global model only")
    return False


def entry(run, r, which, sv, floor, tau, z=None, classifier=None) -> dict:
    """One model's numbers (``spectra.measures``) with the run, round and model they are of."""
    return {"run": run.path.name, "alpha": run.meta.get("alpha"), "reg": run.meta.get("reg"),
            "method": run.meta.get("method"), "round": r, "model": which,
            **measures(sv, floor, tau, z, classifier)}


def model_layers(fs, run, r: int, client, layers, tau: float, positions: int = 0) -> tuple[list[dict], dict]:
    """One model's rows (per layer its width and measures) and its spectra (name -> sv, floor)."""
    got = fs.layers(run, r, client, list(layers) or None, positions)
    rows = [{"layer": name, "width": width, **layer_measures(sv, floor, tau)}
            for name, (sv, floor, width) in got.items()]
    return rows, {name: (sv, floor) for name, (sv, floor, _) in got.items()}
