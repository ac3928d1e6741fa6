"""Choosing runs for the analysis commands: --store/--run and the filters, rounds, labels, one-line warnings."""
from __future__ import annotations

from pathlib import Path

import json

import click

from ..config import alpha_str, parse_alpha
from ..errors import CollapseLabError
from ..store import RunDir, find_runs

# Runs whose identities differ only in these are seeds (or lengths) of one configuration.
SEED_KEYS = ("seed", "rounds")


def warn(msg: str) -> None:
    click.echo(f"warning: {msg}", err=True)


def load_run(path: str | Path) -> RunDir:
    run = RunDir(Path(path))
    if not (run.path / "run.json").is_file():
        raise CollapseLabError(f"--run {path}: not a run folder (no run.json); point it at <store>/<run>")
    run.config  # an unreadable run.json is named here
    if run.meta.get("status") == "diverged":
        d = run.meta.get("diverged", {})
        raise CollapseLabError(f"--run {path}: the run diverged in round {d.get('round')} ({d.get('what')}); "
                               "its spectra would be of a broken model: choose another run")
    return run


def select_runs(out: Path, alphas: tuple[str, ...], run_paths: tuple[str, ...], dataset: str | None = None,
                model: str | None = None, regs: tuple[str, ...] = (), methods: tuple[str, ...] = ()) -> list[RunDir]:
    """The runs to analyse: the ones named by --run, else every run in ``out`` matching the
    filters (nothing else is dropped: seeds of one configuration are aggregated by
    ``seed_groups``, other configurations drawn apart). All must share one data set and
    model. Runs that diverged are left out by name; unfinished ones are used with a warning
    line; two folders holding the very same run (a copy) count once, said in a line."""
    if run_paths:
        filters = [n for n, v in (("--alpha", alphas), ("--dataset", dataset), ("--model", model), ("--reg", regs),
                                  ("--method", methods)) if v]
        if filters:
            raise CollapseLabError(f"{', '.join(filters)} would be ignored with --run (the runs are named); drop one")
        runs = [load_run(p) for p in run_paths]
    else:
        found = find_runs(out, warn)
        for r in found:
            if r.meta.get("status") == "diverged":
                warn(f"{r.path.name} diverged in round {r.meta.get('diverged', {}).get('round')}; left out")
        runs = [r for r in found if r.meta.get("status") != "diverged" and r.meta.get("rounds_complete", 0) >= 1]
        if not runs and any(r.meta.get("status") == "diverged" for r in found):
            raise CollapseLabError(f"no usable runs in {out}: the trained ones diverged; retrain them with a lower "
                                   "--lr (train --overwrite)")
        if not runs:
            raise CollapseLabError(f"no trained runs in {out}; run `collapse-lab train` first, or point --store at "
                                   "the run store (or --run at a run folder)")
        want = {alpha_str(parse_alpha(a)) for a in alphas}
        for name, keep in (("--alpha", (lambda r: r.meta.get("partition") == "dirichlet" and r.meta.get("alpha") in want)
                            if want else None),
                           ("--dataset", (lambda r: r.meta.get("dataset") == dataset) if dataset else None),
                           ("--model", (lambda r: r.meta.get("model") == model) if model else None),
                           ("--reg", (lambda r: r.meta.get("reg") in regs) if regs else None),
                           ("--method", (lambda r: r.meta.get("method") in methods) if methods else None)):
            if keep is None:
                continue
            left = [r for r in runs if keep(r)]
            if not left:
                have = sorted({str(r.meta.get(name[2:])) for r in runs})
                raise CollapseLabError(f"no trained run in {out} matches {name} (after the filters before it); "
                                       f"the runs left have {name[2:]}: {', '.join(have)}")
            runs = left
        runs = _drop_copies(runs)
    for field in ("dataset", "model"):
        values = sorted({str(r.meta.get(field)) for r in runs})
        if len(values) > 1:
            raise CollapseLabError(f"the selected runs mix {field}s ({', '.join(values)}); choose one with --{field}")
    for r in runs:
        m = r.meta
        if m.get("status") != "complete":
            warn(f"{r.path.name} is unfinished ({m.get('rounds_complete', 0)} of {m.get('rounds')} rounds); its last "
                 "complete round is used unless --round says otherwise")
    return sorted(runs, key=sort_key)


def _drop_copies(runs: list[RunDir]) -> list[RunDir]:
    by_identity: dict[str, list[RunDir]] = {}
    for r in runs:
        by_identity.setdefault(json.dumps(r.config.identity(), sort_keys=True, default=str), []).append(r)
    out = []
    for same in by_identity.values():
        same.sort(key=lambda r: r.meta.get("created", ""))
        out.append(same[-1])
        for r in same[:-1]:
            warn(f"{r.path.name} holds the same run as {same[-1].path.name} (a copy); the newer is used")
    return out


def config_key(run: RunDir) -> dict:
    """The run's identity without its seed and length: what its seeds share."""
    return {k: v for k, v in run.config.identity().items() if k not in SEED_KEYS}


def seed_groups(runs: list[RunDir]) -> list[tuple[str, list[RunDir]]]:
    """Runs grouped by configuration (seeds together), each with a label that names what
    sets it apart from the other groups (``describe`` when there is one group), and the
    number of seeds when more than one."""
    groups: dict[str, list[RunDir]] = {}
    keys: dict[str, dict] = {}
    for r in runs:
        k = json.dumps(config_key(r), sort_keys=True, default=str)
        groups.setdefault(k, []).append(r)
        keys[k] = config_key(r)
    varying = sorted({f for a in keys.values() for b in keys.values() for f in set(a) | set(b) if a.get(f) != b.get(f)})
    out = []
    for k, members in groups.items():
        first = members[0]
        if len(groups) == 1 or not varying:
            label = describe(first)
        else:
            label = ", ".join(f"{f}={_short(keys[k].get(f))}" for f in varying)
        if len(members) > 1:
            label += f" (n={len(members)} seeds)"
        out.append((label, sorted(members, key=lambda r: r.meta.get("seed", 0))))
    return sorted(out, key=lambda g: sort_key(g[1][0]))


def _short(v) -> str:
    if isinstance(v, dict):
        return "{" + ",".join(f"{a}={b}" for a, b in sorted(v.items())) + "}"
    return f"{v:g}" if isinstance(v, float) else str(v)


def sort_key(run: RunDir):
    m = run.meta
    return (float(parse_alpha(m.get("alpha", "inf"))) if m.get("partition") == "dirichlet" else 0.0,
            m.get("reg", ""), m.get("method", ""), run.path.name)


def pick_round(run: RunDir, r: int | None) -> int:
    done = int(run.meta.get("rounds_complete", 0))
    if r is None:
        return done
    if not 1 <= r <= done:
        raise CollapseLabError(f"--round {r}: {run.path.name} has trained rounds 1..{done} (round 0 is the untrained "
                               "initial model)" if r == 0 else f"--round {r}: {run.path.name} has trained rounds 1..{done}")
    return r


def parse_rounds(spec: str, last: int) -> list[int]:
    """'all', 'A:B' (inclusive) or 'A,B,C' -> sorted rounds within 1..last."""
    try:
        if spec == "all":
            rounds = list(range(1, last + 1))
        elif ":" in spec:
            a, b = spec.split(":", 1)
            rounds = list(range(int(a) if a else 1, (int(b) if b else last) + 1))
        else:
            rounds = [int(s) for s in spec.split(",") if s.strip()]
    except ValueError:
        raise CollapseLabError(f"--rounds {spec!r}: use all, A:B or A,B,C") from None
    if ":" in spec and spec != "all":
        a, b = spec.split(":", 1)
        if a and b and int(a) > int(b):
            raise CollapseLabError(f"--rounds {spec!r}: the range runs backwards; write A:B with A <= B")
    bad = [r for r in rounds if not 0 <= r <= last]
    if not rounds or bad:
        raise CollapseLabError(f"--rounds {spec!r}: rounds must lie in 0..{last} (the run's trained rounds)")
    return sorted(set(rounds))


def describe(run: RunDir) -> str:
    m = run.meta
    part = f"alpha={m.get('alpha')}" if m.get("partition") == "dirichlet" else (
        f"M={m.get('classes_per_client')}" if m.get("partition") == "pathological" else (
            f"scenes M={m.get('classes_per_client')}" if m.get("partition") == "scenes" else m.get("partition", "")))
    extra = "" if m.get("reg") == "none" else f" + {m.get('reg')}"
    method = "" if m.get("method") == "fedavg" else f" {m.get('method')}"
    return f"{part}{method}{extra}"
