"""Which rounds of a run an analysis reads: the run's last by default, a named round
checked against what the run holds (retention prunes, an import keeps some rounds), and
the ``--over-rounds`` grammar (``all``, ``A:B``, ``A,B,C``)."""
from __future__ import annotations

from ..errors import CollapseLabError
from ..store import RunDir


def kept_rounds(run: RunDir) -> list[int]:
    """The rounds whose global model the run holds (retention, or an import of some rounds)."""
    return [r for r in range(int(run.meta.get("rounds_complete", 0)) + 1) if run.has_global(r)]


def pick_round(run: RunDir, r: int | None) -> int:
    done = int(run.meta.get("rounds_complete", 0))
    if r is None:
        return done
    if not 1 <= r <= done:
        raise CollapseLabError(f"--round {r}: {run.path.name} has trained rounds 1..{done} (round 0 is the untrained "
                               "initial model)" if r == 0 else f"--round {r}: {run.path.name} has trained rounds 1..{done}")
    if not run.has_global(r):
        from ..store.retention import check_readable_round

        check_readable_round(run, r, None, "choose one with --round")  # pruned: named as pruned, with why
        raise CollapseLabError(f"--round {r}: {run.path.name} holds no global model of round {r}; it holds rounds "
                               f"{_spans(kept_rounds(run))}")
    return r


def _spans(rounds: list[int]) -> str:
    return ", ".join(str(r) for r in rounds) if len(rounds) <= 12 else f"{', '.join(map(str, rounds[:10]))}, ... {rounds[-1]}"


def parse_rounds(spec: str, last: int, option: str = "--over-rounds") -> list[int]:
    """'all', 'A:B' (inclusive) or 'A,B,C' -> sorted rounds within 1..last; ``option``: the
    option the words came from, as the error names it."""
    try:
        if spec == "all":
            rounds = list(range(1, last + 1))
        elif ":" in spec:
            a, b = spec.split(":", 1)
            rounds = list(range(int(a) if a else 1, (int(b) if b else last) + 1))
        else:
            rounds = [int(s) for s in spec.split(",") if s.strip()]
    except ValueError:
        raise CollapseLabError(f"{option} {spec!r}: use all, A:B or A,B,C") from None
    if ":" in spec and spec != "all":
        a, b = spec.split(":", 1)
        if a and b and int(a) > int(b):
            raise CollapseLabError(f"{option} {spec!r}: the range runs backwards; write A:B with A <= B")
    bad = [r for r in rounds if not 0 <= r <= last]
    if not rounds or bad:
        raise CollapseLabError(f"{option} {spec!r}: rounds must lie in 0..{last} (the run's trained rounds)")
    return sorted(set(rounds))
