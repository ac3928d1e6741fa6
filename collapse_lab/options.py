"""Options of methods and regularizers: defaults filled in, names and values checked.

An option is a number, or text when its default is text (``choices`` then lists the
values it may take, e.g. FedDecorr's ``normalization``: paper or official)."""
from __future__ import annotations

import math

from .errors import CollapseLabError


def resolve_numeric(kind: str, name: str, defaults: dict, given: dict, int_keys=frozenset(),
                    choices: dict | None = None) -> dict:
    """``{**defaults, **given}`` as numbers (None stays None: derived later), text options
    (a text default) as one of their ``choices``; an unknown name, a non-number, a
    non-finite value, a fraction for an ``int_keys`` option or a text value outside its
    choices raises CollapseLabError naming ``kind`` and ``name`` (e.g. "method fedprox")."""
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
        if isinstance(default, str):
            allowed = (choices or {}).get(k)
            if not isinstance(v, str) or (allowed and v not in allowed):
                raise CollapseLabError(f"{kind} {name} option {k}={v!r}: use "
                                       + (" or ".join(allowed) if allowed else "text"))
            out[k] = v
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
