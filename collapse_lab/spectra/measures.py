"""Every number the analyses report for one model's representations, defined once.

A measure is one registered function with its name, label, unit, the paper and equation
it implements, and what it reads: ``spectrum`` (all singular values of the covariance,
descending, float64, with their numerical floor), ``top`` (the k largest, as the papers'
figures plot them), ``z`` (the representations themselves) or ``classifier`` (its weight).
``spectrum``, the renderers, the training probe, the report, TensorBoard and the claims
name measures by these names; two different things have two names (``n_significant``
counts every singular value above tau, ``n_significant_top`` those among the top k). A
new measure is one ``@measure`` here (and its name in a spec's claims).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..registry import Registry
from .constants import TOP  # noqa: F401  (re-exported)
from .functional import DEFAULT_REL, DEFAULT_TAU, effective_rank, local_global_gap, n_relative, n_significant, tail_mean, \
    tail_share, variance_share

READS = ("spectrum", "top", "z", "classifier", "pair")
# the measures the training probe logs each round as ``probe_<name>`` (``training.probe``;
# TensorBoard shows them as ``spectrum/<name>``)
PROBED = ("dead_units", "effective_rank", "stable_rank", "participation_ratio")
# the measures of a model that ``report`` tabulates (every measure of the spectrum or z but
# the two shares, which restate counts)
REPORTED = ("n_significant", "effective_rank", "participation_ratio", "dead_units", "rankme", "stable_rank",
            "alpha_req")


@dataclass(frozen=True)
class Inputs:
    """What a measure may read: the spectrum ``sv`` and its ``floor``, tau, k, and, where
    available, the representations ``z`` (N x d) and the classifier's weight (C x d); a
    measure of two models (``pair``) reads the local model's spectrum as ``sv`` and the
    global model's as ``other`` (with its floor)."""
    sv: torch.Tensor
    floor: float
    tau: float = DEFAULT_TAU
    top: int = TOP
    z: torch.Tensor | None = None
    classifier: torch.Tensor | None = None
    other: torch.Tensor | None = None
    other_floor: float = 0.0


def _check(name: str, fn, info: dict) -> None:
    missing = {"label", "unit", "reads", "definition"} - set(info)
    if missing:
        raise TypeError(f"measure {name}: declare {', '.join(sorted(missing))}")
    if info["reads"] not in READS:
        raise TypeError(f"measure {name}: reads must be one of {READS}")


MEASURES: Registry = Registry("measure", check=_check)


def measure(name: str, label: str, unit: str, reads: str, definition: str, counts_top: bool = False,
            per_layer: bool = True):
    """Register ``fn(inputs) -> number`` as the measure ``name``; ``counts_top``: a count
    among the top k, bounded by 0 and k (a claim comparing it can saturate); ``per_layer``
    False: not one of a layer's measures (``PER_LAYER``)."""
    return MEASURES.register(name, label=label, unit=unit, reads=reads, definition=definition, counts_top=counts_top,
                             per_layer=per_layer)


def bounds(name: str, top: int, classes: int | None = None) -> tuple[float, ...] | None:
    """The values at which the count ``name`` stops moving: 0 and k for a count among the top
    k, and the number of classes (a trained classifier's representation settles on about as
    many directions as classes, so a count tied there in every seed cannot see the claimed
    difference); None for a measure without such bounds or an unknown name."""
    if name not in MEASURES.names() or not MEASURES.info(name).get("counts_top"):
        return None
    return (0.0, float(top)) + ((float(classes),) if classes else ())


@measure("n_significant", "n above τ", "singular values", "spectrum",
         "singular values of the covariance above tau (FedDecorr Sec. 3.1; tau = 0.01, log10 tau = -2)")
def _n_significant(s: Inputs) -> int:
    return n_significant(s.sv, s.tau)


@measure("n_significant_top", "n above τ (top k)", "singular values", "top",
         "singular values above tau among the k largest, as the figures plot them (FedDecorr Fig. 2-3, k = 100)",
         counts_top=True)
def _n_significant_top(s: Inputs) -> int:
    return n_significant(s.sv[:s.top], s.tau)


@measure("n_relative_top", "n above ρ·σ₁ (top k)", "singular values", "top",
         "singular values with sigma_k / sigma_1 above rho = 0.01 among the k largest: the scale-free form of the "
         "count above tau (FedDecorr Sec. 3.1 reads tau at MobileNetV2's scale; the ratio reads the same shape at any)",
         counts_top=True)
def _n_relative_top(s: Inputs) -> int:
    return n_relative(s.sv[:s.top], DEFAULT_REL)


@measure("effective_rank_top", "effective rank (top k)", "dimensions", "top",
         "the effective rank of the k largest singular values alone (the logged top k of the training probe; "
         "below the full spectrum's, which also counts the tail)", per_layer=False)
def _effective_rank_top(s: Inputs) -> float:
    return effective_rank(s.sv[:s.top], s.floor)


@measure("tail_mean", "tail mean log10 σ (top k)", "log10", "top",
         "mean log10 singular value over the tail half of the top k (k/2 < k' <= k): the literal reading of "
         "FedDecorr Fig. 3's lifted tail; not scale-free (a rescaled spectrum moves it)")
def _tail_mean(s: Inputs) -> float:
    return tail_mean(s.sv[:s.top], s.floor)


@measure("tail_share", "tail share of the trace", "share", "spectrum",
         "sum of sigma_k over the tail half of the top k (k/2 < k' <= k) over the trace (the sum of every "
         "singular value): the scale-free form of FedDecorr Fig. 3's lifted tail")
def _tail_share(s: Inputs) -> float:
    return tail_share(s.sv, s.top)


@measure("effective_rank", "effective rank", "dimensions", "spectrum",
         "exp of the entropy of the normalised singular values above the floor (Roy & Vetterli 2007)")
def _effective_rank(s: Inputs) -> float:
    return effective_rank(s.sv, s.floor)


@measure("participation_ratio", "participation ratio", "dimensions", "spectrum",
         "(sum lambda_k)^2 / sum lambda_k^2 of the covariance's eigenvalues (Gao et al. 2017; Recanatesi et al. 2019)")
def _participation_ratio(s: Inputs) -> float:
    sv = s.sv.to(torch.float64)
    den = float((sv * sv).sum())
    return float(sv.sum()) ** 2 / den if den > 0 else 0.0


@measure("top10_variance_share", "top-10 variance share", "share", "spectrum",
         "share of the covariance's trace in its 10 largest singular values")
def _top10(s: Inputs) -> float:
    return variance_share(s.sv, 10)


@measure("dead_units", "dead units", "units", "z",
         "units whose variance over the evaluation set is at or below the numerical floor (spectra.rank)")
def _dead_units(s: Inputs) -> int:
    from .rank import dead_units

    return len(dead_units(s.z))


@measure("dead_share", "dead units (share)", "share", "z", "dead units over the representation's dimension")
def _dead_share(s: Inputs) -> float:
    return _dead_units(s) / max(len(s.sv), 1)


@measure("rankme", "RankMe", "dimensions", "z",
         "exp of the entropy of the uncentred embedding matrix's singular values + 1e-7 (Garrido et al. 2023, Eq. 1)")
def _rankme(s: Inputs) -> float:
    from .rank import rankme

    return rankme(s.z)


@measure("stable_rank", "stable rank", "dimensions", "spectrum",
         "sum of the covariance's eigenvalues over the largest (Rudelson & Vershynin 2007)")
def _stable_rank(s: Inputs) -> float:
    from .rank import stable_rank

    return stable_rank(s.sv)


@measure("alpha_req", "α-ReQ", "decay exponent", "spectrum",
         "slope alpha of log lambda_k ~ -alpha log k over ranks 11-100 (Agrawal et al. 2022)")
def _alpha_req(s: Inputs) -> float:
    from .rank import alpha_req

    return alpha_req(s.sv, s.floor)


@measure("R_top", "R (top k)", "log10", "pair",
         "journal Eq. 1 over the first k indices, a value at or below its floor raised to it: the mean log10 gap "
         "between the local and the global spectrum as the figures draw it (journal Fig. 4, 6)")
def _r_top(s: Inputs) -> float:
    return local_global_gap(s.sv, s.other, s.floor, s.other_floor, top=s.top)[0]


@measure("R_floor", "R (resolved indices)", "log10", "pair",
         "journal Eq. 1 over the leading indices where both spectra are above their numerical floors (K varies "
         "with the runs; `compare` without --top)")
def _r_floor(s: Inputs) -> float:
    return local_global_gap(s.sv, s.other, s.floor, s.other_floor)[0]


@measure("below_share", "share of k with σ_global < σ_local", "share", "pair",
         "share of the first k indices where the global model's singular value is below the local model's "
         "(journal Fig. 4: the global spectrum lies under the local one)")
def _below_share(s: Inputs) -> float:
    k = min(s.top, len(s.sv), len(s.other))
    return float((s.other[:k] < s.sv[:k]).double().mean())


# the measures of each layer's spectrum (``collapse-lab layers``, ``train --probe-layers``): every
# registered measure that reads the spectrum alone (a layer has no classifier, and its rows are
# not kept), in registration order
PER_LAYER = tuple(n for n in MEASURES.names()
                  if MEASURES.info(n)["reads"] in ("spectrum", "top") and MEASURES.info(n)["per_layer"])


def layer_measures(sv: torch.Tensor, floor: float, tau: float = DEFAULT_TAU) -> dict:
    """The ``PER_LAYER`` measures of one layer's spectrum; a measure the layer is too narrow
    for (alpha-ReQ reads ranks 11-100) is None, so JSON stays JSON."""
    s = Inputs(sv, floor, tau)
    return {m: (None if isinstance(v, float) and v != v else v) for m in PER_LAYER for v in [value(m, s)]}


def value(name: str, inputs: Inputs):
    """One measure of ``inputs`` (an unknown name lists the known ones)."""
    fn = MEASURES.get(name)
    need = MEASURES.info(name)["reads"]
    if need in ("z", "classifier", "pair") and getattr(inputs, "other" if need == "pair" else need) is None:
        raise ValueError(f"measure {name} reads {need}, which was not given")
    return fn(inputs)


def label(name: str) -> str:
    """The measure's axis and legend label (with its unit where it is not a count of itself)."""
    return MEASURES.info(name)["label"]


def classifier_singular_values(weight: torch.Tensor) -> list[float]:
    """The singular values of the classifier's weight (C x d), in float64, largest first: the
    classifier spectrum of docs/analyses.md, one computation for the spectrum command and the probe."""
    return torch.linalg.svdvals(weight.detach().to("cpu", torch.float64)).tolist()


def measures(sv: torch.Tensor, floor: float, tau: float = DEFAULT_TAU, z: torch.Tensor | None = None,
             classifier: torch.Tensor | None = None) -> dict:
    """The record of one spectrum ``sv`` (descending, float64; ``floor`` its numerical
    floor): the top singular values and every registered measure that reads the spectrum;
    with the representations ``z`` (N x d) also those that read z (and the dead units'
    indices); with the classifier's weight (C x d) its singular values (FedUV)."""
    s = Inputs(sv, floor, tau, TOP, z, classifier)
    out = {"singular_values": sv[:TOP].tolist(), "tau": tau, "floor": floor, "dim": len(sv)}
    for name in MEASURES.names():
        reads = MEASURES.info(name)["reads"]
        if reads == "spectrum" or (reads == "z" and z is not None):
            out[name] = value(name, s)
    if z is not None:
        from .rank import dead_units

        out["dead_unit_indices"] = dead_units(z).tolist()
    if classifier is not None:
        out["classifier_singular_values"] = classifier_singular_values(classifier)
    return out
