"""What a ladder's kept evidence and records must hold before a verdict reads them: a file
edited by hand or damaged, yet still valid JSON (a spectrum cut to three values, a missing
accuracy curve, a record without its regime), is refused in one line that names the file and
the fix, never read into other verdicts (``kept_evidence.read``, ``climb.kept``,
``ladder.claims_of``)."""
from __future__ import annotations

import math

from ..errors import CollapseLabError

SPECTRA = ("spectrum_global", "spectrum_client0")
FLOORS = ("floor_global", "floor_client0")


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def measures_problem(m: dict, rounds: int | None = None) -> str | None:
    """What is wrong with one run's measures (None: nothing). With spectra (evidence format 2):
    both spectra descending, non-negative, finite, of the representation's width (``units``)
    and of one length, their floors, and an accuracy curve of ``rounds`` points."""
    if not isinstance(m, dict):
        return "its measures are not a JSON object"
    for k in ("alpha", "reg", "seed", "setting", "test_acc"):
        if k not in m:
            return f"it lacks {k!r}"
    if not _number(m["test_acc"]) or not 0 <= m["test_acc"] <= 1:
        return f"test_acc {m['test_acc']!r} is not an accuracy in [0, 1]"
    if not any(k in m for k in (*SPECTRA, "acc_curve")):
        return None  # a format-1 record's runs: verdicts kept, no evidence to check
    for k in (*SPECTRA, *FLOORS, "acc_curve"):
        if k not in m:
            return f"it lacks {k!r} (the evidence of a format-2 record holds both spectra, floors and the curve)"
    for k in SPECTRA:
        sv = m[k]
        if not isinstance(sv, list) or not sv or not all(_number(x) and x >= 0 for x in sv):
            return f"{k} is not a list of finite values >= 0"
        if any(a < b for a, b in zip(sv, sv[1:])):
            return f"{k} is not in descending order"
    widths = {len(m[k]) for k in SPECTRA} | ({m["units"]} if _number(m.get("units")) else set())
    if len(widths) > 1:
        return f"its spectra have {' and '.join(str(len(m[k])) for k in SPECTRA)} values for {m.get('units')} units"
    if not all(_number(m[k]) and m[k] >= 0 for k in FLOORS):
        return "a floor is not a finite value >= 0"
    curve = m["acc_curve"]
    if not isinstance(curve, list) or not all(x is None or (_number(x) and 0 <= x <= 100) for x in curve):
        return "acc_curve is not a list of accuracies in points"
    if rounds is not None and len(curve) != rounds:
        return f"acc_curve has {len(curve)} points for {rounds} rounds"
    return None


def check_measures(m: dict, where: str, rounds: int | None = None) -> dict:
    if (why := measures_problem(m, rounds)) is not None:
        raise CollapseLabError(f"{where}: {why}; the file is damaged or was edited: restore it (git checkout), or "
                               "delete it and the ladder measures the run again from its store")
    return m


def check_record(rec, where: str) -> dict:
    """A ladder record: its keys, and each run's measures where it keeps them."""
    if not isinstance(rec, dict):
        raise CollapseLabError(f"{where}: not a JSON object; restore it (git checkout) or delete it to compute it again")
    need = ("rung", "entry") if "na" in rec else ("rung", "entry", "regime", "claims", "runs", "rounds")
    for k in need:
        if k not in rec:
            raise CollapseLabError(f"{where}: it lacks {k!r}; the record is damaged or was edited: restore it "
                                   "(git checkout), or delete it and the ladder computes it again")
    if "na" in rec:
        return rec
    runs = rec["regime"].get("runs") if isinstance(rec["regime"], dict) else None
    if not isinstance(runs, list) or not isinstance(rec["claims"], list):
        raise CollapseLabError(f"{where}: its regime runs or claims are not lists; restore it (git checkout), or delete "
                               "it and the ladder computes it again")
    for m in runs:
        check_measures(m, f"{where}, run {m.get('run', '?') if isinstance(m, dict) else '?'}", int(m.get("round"))
                       if isinstance(m, dict) and _number(m.get("round")) else None)
    return rec
