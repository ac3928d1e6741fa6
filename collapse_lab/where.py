"""The one run filter: whether a run's stored value of a field equals a wanted one, by value
and not by spelling, for every place that selects runs (``runs --where``, ``open_store``,
a catalogue panel's ``where``): alpha as a number (0.50, 5e-1 and 0.5 are one alpha; inf and
iid are IID), numbers within 1e-12 relative, booleans and None by their words on the command
line, structures as JSON."""
from __future__ import annotations

import json
import math

from .errors import CollapseLabError


def value_matches(stored, given, field: str) -> bool:
    """Whether ``stored`` (a run's value of ``field``) equals ``given`` (text from the command
    line, or a Python value)."""
    if field == "alpha":
        from .config import parse_alpha

        try:
            return parse_alpha(stored) == parse_alpha(given)
        except CollapseLabError:
            return str(stored) == str(given)
    if isinstance(given, str):
        return _text_matches(stored, given)
    if isinstance(stored, bool) or isinstance(given, bool):
        return stored is given or stored == given and type(stored) is type(given)
    if isinstance(stored, (int, float)) and isinstance(given, (int, float)):
        return _close(float(stored), float(given))
    return stored == given or (stored is not None and str(stored) == str(given))


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12)


def _text_matches(stored, given: str) -> bool:
    if isinstance(stored, bool):
        return given.strip().lower() == str(stored).lower()
    if isinstance(stored, (int, float)):
        try:
            return _close(float(stored), float(given))
        except ValueError:
            return False
    if stored is None:
        return given.strip().lower() in ("none", "null", "")
    if isinstance(stored, (dict, list)):
        try:
            return json.loads(given) == stored
        except ValueError:
            return False
    return str(stored) == given
