"""What a run's checkpoints take on disk: the volume a prepared run will still write under
its retention (``--keep-global``, ``--keep-local``) and the method's state, checked against
the store's free space before anything trains."""
from __future__ import annotations

import shutil
from pathlib import Path

from ..config import clients_per_round
from ..errors import CollapseLabError
from ..methods import METHODS
from ..store import keeps_global, parse_keep_global, parse_keep_local
from .prepare import Prepared


def estimate_bytes(p: Prepared, keep_spec: str | None = None) -> int:
    """Checkpoint volume a run will still write: the global models --keep-global retains
    (two coexist for a moment: the previous one goes once the next round is complete), the
    client models --keep-local retains, and the method's state (``Method.server_copies`` /
    ``client_copies`` model-sized copies per round)."""
    cfg = p.config
    mode, n = parse_keep_local(keep_spec or cfg.keep_local)
    start = p.start
    rounds = list(range(start + 1, cfg.rounds + 1))
    per_round = clients_per_round(cfg)
    if mode == "all":
        kept_rounds = len(rounds)
    elif mode == "every":
        kept_rounds = sum(1 for r in rounds if r % n == 0 or r == cfg.rounds)
    elif mode == "last":  # the previous round's clients go only once the next round is complete: two coexist
        kept_rounds = min(len(rounds), 2)
    else:  # none: a round's clients are written, then removed once it is complete
        kept_rounds = min(len(rounds), 1)
    cls = METHODS.get(cfg.method)
    # per-client method state follows the client files; last/none briefly hold two rounds
    client_state_rounds = kept_rounds if mode in ("all", "every") else min(len(rounds), 2)
    keep_g = parse_keep_global(cfg.keep_global)
    new = ([0] if start == 0 else []) + rounds
    kept = lambda qs: max(min(len(qs), 2), sum(keeps_global(keep_g, q, cfg.rounds, cfg.rounds) for q in qs))  # noqa: E731
    copies = (kept(new)                                         # global models (round 0 included)
              + kept_rounds * per_round                         # client models
              + kept(rounds) * cls.server_copies                # server method state (rounds >= 1) follows them
              + client_state_rounds * cfg.clients * cls.client_copies)  # per-client method state
    return int(copies * p.state_bytes)


def check_disk(prepared: list[Prepared], out: Path) -> dict:
    """Compare the checkpoint volume of the runs to be trained with the free space of
    ``out``; raise CollapseLabError with a --keep-local setting that fits, if one does."""
    todo = [p for p in prepared if p.action in ("train", "resume")]
    need = sum(estimate_bytes(p) for p in todo)
    probe = Path(out)
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    info = {"estimate_bytes": need, "free_bytes": free}
    if need <= free:
        return info
    gb = human_bytes
    fits = None
    for spec in ("every:10", "every:5", "last", "none"):
        alt = sum(estimate_bytes(p, spec) for p in todo)
        if alt <= free:
            fits = (spec, alt)
            break
    hint = (f"--keep-local {fits[0]} would need about {gb(fits[1])}" if fits else
            "even --keep-local none does not fit; free some space or choose another --store")
    raise CollapseLabError(f"the runs would write about {gb(need)} of checkpoints to {out} but only {gb(free)} is free; "
                           f"{hint}")


def human_bytes(b: float) -> str:
    """1.23 GB, 45.6 MB, 789 kB, 12 B (SI units, up to PB for a catalogue at paper scale):
    never "0.00 GB" for a small but real amount."""
    for unit, size in (("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= size:
            return f"{b / size:,.{1 if unit in ('MB', 'kB') else 2}f} {unit}"
    return f"{int(b)} B"
