"""Numeric options of methods and regularizers: defaults filled in, names and values checked."""
from __future__ import annotations

import math

from .errors import CollapseLabError


def resolve_numeric(kind: str, name: str, defaults: dict, given: dict, int_keys=frozenset()) -> dict:
    """``{**defaults, **given}`` as numbers (None stays None: derived later); an unknown
    name, a non-number, a non-finite value or a fraction for an ``int_keys`` option raises
    CollapseLabError naming ``kind`` and ``name`` (e.g. "method fedprox")."""
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        known = ", ".join(sorted(defaults)) or "none"
        raise CollapseLabError(f"{kind} {name} has no option {', '.join(unknown)}; its options: {known}")
    out = {}
    for k, default in defaults.items():
        v = given.get(k, default)
        if v is None:
            out[k] = None
            continue
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise CollapseLabError(f"{kind} option {k}={v!r} is not a number") from None
        if not math.isfinite(f):
            raise CollapseLabError(f"{kind} option {k}={v!r} must be finite")
        if k in int_keys:
            if f != int(f):
                raise CollapseLabError(f"{kind} option {k}={v!r} must be a whole number")
            f = int(f)
        out[k] = f
    return out
