"""The global model's covariance spectrum on a fixed probe set, logged every round, so
spectra over rounds exist even for runs that keep no checkpoint but the last (--keep-local
none) and without a second pass over the store.

The probe set is ``--probe`` samples of the test set (all of it when smaller), drawn once
from the run's seed; the same samples every round. The forward runs in the model's
training dtype, in eval mode, in batches of the evaluation batch size; the covariance and
its eigenvalues in float64 on the CPU (``linalg.covariance`` and ``eigen_spectrum``, the
functions the analyses use; their features come from a float64 forward, so the logged values agree
with ``collapse-lab spectrum`` on the same samples to float32 round-off). Recorded: the top
``TOP`` singular values, the numerical floor, the representation width, the number of dead
units (variance at or below the floor) and the other measures of ``spectra.measures.PROBED``
over the whole spectrum (they come free with the eigenvalues), the singular values of the
classifier's weight, and the seconds it took (``probe_seconds``: docs/analyses.md, its cost against
the round's).
"""
from __future__ import annotations

import time
from typing import Callable

import numpy as np
import torch

from ..layerwise import layer_spectra
from ..linalg import covariance, eigen_spectrum
from ..spectra.functional import DEFAULT_TAU
from ..spectra.measures import PROBED, TOP, Inputs, classifier_singular_values, layer_measures, value
from ..seeds import PURPOSE_PROBE, seed_for



def probe_indices(n_test: int, size: int, seed: int) -> torch.Tensor:
    """``size`` test indices (sorted), from the run's seed alone."""
    if size >= n_test:
        return torch.arange(n_test)
    rng = np.random.default_rng(seed_for(seed, PURPOSE_PROBE))
    return torch.from_numpy(np.sort(rng.choice(n_test, size=size, replace=False)))


class NonFiniteProbe(ValueError):
    """The representation or its covariance on the probe set is not finite (a diverged model)."""


class Probe:
    def __init__(self, x: torch.Tensor, to_float: Callable, batch_size: int):
        self.x, self.to_float, self.batch_size = x, to_float, batch_size

    @torch.inference_mode()
    def __call__(self, model: torch.nn.Module) -> dict:
        t0 = time.perf_counter()
        was = model.training
        model.eval()
        z = torch.cat([model(self.to_float(self.x[s:s + self.batch_size]))[1].float()
                       for s in range(0, len(self.x), self.batch_size)])
        model.train(was)
        if not bool(torch.isfinite(z).all()):
            raise NonFiniteProbe("non-finite representation")
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # one thread: the logged spectrum does not depend on how many processes share the cores
        try:
            cov = covariance(z)
            if not bool(torch.isfinite(cov).all()):
                raise NonFiniteProbe("covariance overflows float64")
            sv, floor = eigen_spectrum(cov, z.shape[0])
        finally:
            torch.set_num_threads(threads)
        # the analyses' own functions (spectra: the math layer below both subsystems)
        s = Inputs(sv, floor, z=z)
        return {"probe_n": int(z.shape[0]), "probe_dim": int(z.shape[1]), "probe_sv": sv[:TOP].tolist(),
                "probe_floor": floor, **{f"probe_{m}": value(m, s) for m in PROBED},
                "probe_classifier_sv": classifier_singular_values(model.classifier.weight),
                "probe_seconds": round(time.perf_counter() - t0, 4)}

    def layers(self, model: torch.nn.Module) -> dict:
        """``--probe-layers``: for each layer of ``layerwise.default_layers`` (the model's
        stages, then z) its width and the measures of ``spectra.measures.PER_LAYER`` at the
        paper's tau, on the probe set, from one float64 forward pass of a copy of the model
        (``layerwise.layer_spectra``, what ``collapse-lab layers`` computes on the test set)."""
        t0 = time.perf_counter()
        got = layer_spectra(model, self.x, None, self.to_float, self.x.device, self.batch_size)
        out = {}
        for name, (sv, floor, width) in got.items():
            if not bool(torch.isfinite(sv).all()):
                raise NonFiniteProbe(f"non-finite covariance of layer {name}")
            out[name] = {"width": width, **layer_measures(sv, floor, DEFAULT_TAU)}
        return {"layers": out, "tau": DEFAULT_TAU, "seconds": round(time.perf_counter() - t0, 4)}
