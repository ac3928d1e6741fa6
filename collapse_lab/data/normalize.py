"""The input a model saw: the per-channel normalisation ``(x / scale - mean) / std`` a run
records (``RunConfig.normalize``), so that the analyses feed a model trained elsewhere
the inputs it was trained on, not collapse-lab's.

A run's ``normalize`` is one of:

- ``dataset``: the data set's own constants in collapse-lab (what ``train`` uses);
- ``unknown``: a run recorded from other code that did not say (the analyses use the data
  set's constants and say so once);
- ``none``: the input scaled to [0, 1] only (torchvision's ``ToTensor()`` and nothing else);
- ``MEAN/STD``: comma-separated per-channel values (or one for every channel) applied to
  the input scaled to [0, 1], as torchvision's ``Normalize(mean, std)`` after ``ToTensor()``:
  ``0.5/0.5`` for Flower's quickstart, ``0.4914,0.4822,0.4465/0.247,0.2435,0.2616``.
"""
from __future__ import annotations

import dataclasses
import math

from ..errors import CollapseLabError

NAMED = ("dataset", "unknown", "none")


def _numbers(part: str, what: str, spec: str, flag: str) -> tuple[float, ...]:
    try:
        vals = tuple(float(v) for v in part.split(","))
    except ValueError:
        raise CollapseLabError(f"{flag} {spec!r}: the {what} {part!r} is not a comma-separated list of numbers; "
                               "write MEAN/STD, e.g. 0.5/0.5 or 0.4914,0.4822,0.4465/0.247,0.2435,0.2616") from None
    if not all(math.isfinite(v) for v in vals):
        raise CollapseLabError(f"{flag} {spec!r}: the {what} must be finite numbers")
    return vals


def canonical(spec, flag: str = "--normalize") -> str:
    """The recorded form of a normalisation: a named one, or ``MEAN/STD`` from text or from
    a ``(mean, std)`` pair of numbers or sequences."""
    if isinstance(spec, (tuple, list)) and len(spec) == 2:
        mean, std = ([v] if isinstance(v, (int, float)) else list(v) for v in spec)
        spec = ",".join(map(repr, map(float, mean))) + "/" + ",".join(map(repr, map(float, std)))
    if not isinstance(spec, str) or not spec.strip():
        raise CollapseLabError(f"{flag} {spec!r}: give dataset, none, unknown or MEAN/STD (e.g. 0.5/0.5)")
    spec = spec.strip()
    if spec in NAMED:
        return spec
    mean_s, sep, std_s = spec.partition("/")
    if not sep:
        raise CollapseLabError(f"{flag} {spec!r}: give dataset, none, unknown or MEAN/STD (e.g. 0.5/0.5)")
    mean, std = _numbers(mean_s, "mean", spec, flag), _numbers(std_s, "std", spec, flag)
    if not all(s > 0 for s in std):
        raise CollapseLabError(f"{flag} {spec!r}: every std must be > 0")
    return ",".join(f"{v!r}" for v in mean) + "/" + ",".join(f"{v!r}" for v in std)


def constants(spec: str, channels: int, flag: str = "normalize") -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """(mean, std) per channel of ``spec`` for inputs of ``channels`` channels; None for
    ``dataset``/``unknown`` (the data set's own constants). ``flag`` names the option in errors."""
    spec = canonical(spec, flag)
    if spec in ("dataset", "unknown"):
        return None
    if spec == "none":
        return (0.0,) * channels, (1.0,) * channels
    mean_s, _, std_s = spec.partition("/")
    mean, std = _numbers(mean_s, "mean", spec, "normalize"), _numbers(std_s, "std", spec, "normalize")
    out = []
    for what, vals in (("mean", mean), ("std", std)):
        if len(vals) == 1:
            vals = vals * channels
        if len(vals) != channels:
            raise CollapseLabError(f"{flag} {spec!r}: the {what} has {len(vals)} values but the inputs have "
                                   f"{channels} channel(s); give one value or {channels}")
        out.append(vals)
    return out[0], out[1]


def apply(ds, spec: str):
    """``ds`` (a ``data.Dataset``) whose ``to_float`` uses the normalisation ``spec``; the
    same object for ``dataset``/``unknown``."""
    channels = ds.train_x.shape[1] if ds.train_x.dim() == 4 else 1
    c = constants(spec, channels)
    if c is None:
        return ds
    return dataclasses.replace(ds, mean=c[0], std=c[1])


def describe(ds) -> str:
    """The data set's own constants, as a user would write them (for the 'unknown' warning)."""
    return ",".join(f"{v:.4g}" for v in ds.mean) + "/" + ",".join(f"{v:.4g}" for v in ds.std)
