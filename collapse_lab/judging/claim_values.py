"""What the claim checks (``claims``) read and say: a series found by its key, a metric of
it, the panels a claim reads, and numbers printed with the digits that tell them apart."""
from __future__ import annotations

from typing import Callable
from ..config import alpha_str, parse_alpha
from ..errors import CollapseLabError


def _norm(field: str, v):
    return alpha_str(parse_alpha(v)) if field == "alpha" else str(v)


def _get(key: dict, field: str):
    """A key's value; ``a.b`` reads entry b of the dict a (e.g. method_options.gmv_weight)."""
    head, _, rest = field.partition(".")
    v = key.get(head, _MISSING)
    return v.get(rest, _MISSING) if rest and isinstance(v, dict) else v


_MISSING = object()


def _hit(series: dict, where: dict) -> bool:
    """Whether the series' key has every value of ``where`` (a list value: any of them)."""
    def one(k, w) -> bool:
        v = _get(series["key"], k)
        if v is _MISSING:
            return False
        return any(_norm(k, v) == _norm(k, x) for x in w) if isinstance(w, list) else _norm(k, v) == _norm(k, w)

    return all(one(k, w) for k, w in where.items())


def _panels(values: dict, panels: list[int] | None) -> list[dict]:
    ps = values["panels"]
    return [ps[i] for i in panels] if panels is not None else ps


def _say(field: str, v) -> str:
    """A field's value as the legends write it (α = 0.05, α = ∞; others field = value)."""
    from ..labels import label

    return label({field: _norm(field, v)})


def _fmt(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _metric(s: dict, metric: str):
    if metric not in s["metrics"]:
        raise CollapseLabError(f"claim: series {s['label']!r} has no metric {metric!r} (it has "
                               f"{', '.join(s['metrics'])})")
    return s["metrics"][metric]


OPS: dict[str, Callable[[float, float], bool]] = {">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
                                                  "<": lambda a, b: a < b, "<=": lambda a, b: a <= b}


SYMBOL = {">": ">", ">=": "≥", "<": "<", "<=": "≤"}


def _rel(a: float, b: float) -> str:
    """The relation between two measured numbers, as it is."""
    return ">" if a > b else "<" if a < b else "=" if a == b else "?"


def _digits(*pairs) -> int:
    """Significant digits that tell every pair of numbers apart (4 when that does): 3.142
    against 3.142 would misstate 3.14159 > 3.14158."""
    for d in (4, 6, 8, 12, 17):
        if all((f"{x:.{d}g}" == f"{y:.{d}g}") == (x == y) for x, y in pairs):
            return d
    return 17


def _two(a, b) -> tuple[str, str]:
    """Both numbers, told apart (``_digits``)."""
    if not (isinstance(a, float) or isinstance(b, float)):
        return str(a), str(b)
    d = _digits((float(a), float(b)))
    return f"{float(a):.{d}g}", f"{float(b):.{d}g}"


def _link(a: float, b: float, op: str, holds: bool) -> str:
    """The symbol printed between a and b: the claim's where it holds; where it does not, the
    measured relation and the claimed one, so every printed inequality is true as printed."""
    return SYMBOL[op] if holds else f"{_rel(a, b)} (claimed {SYMBOL[op]})"
