"""Finding the runs an analysis command works on."""
from __future__ import annotations

from pathlib import Path

from ..config import alpha_str, parse_alpha
from ..errors import CollapseLabError
from ..store import RunDir, find_runs

# Runs that differ only in these are alternatives of one another ("newest wins").
GROUP_KEYS = ("dataset", "model", "method", "reg", "beta", "partition", "alpha", "classes_per_client", "clients")


def load_run(path: str | Path) -> RunDir:
    run = RunDir(Path(path))
    if not (run.path / "run.json").is_file():
        raise CollapseLabError(f"--run {path}: not a run folder (no run.json); point it at checkpoints/<run>")
    return run


def select_runs(out: Path, alphas: tuple[str, ...], run_paths: tuple[str, ...], dataset: str | None = None,
                model: str | None = None, regs: tuple[str, ...] = (), methods: tuple[str, ...] = ()) -> list[RunDir]:
    """The runs to analyse: the ones named by --run, else every run in ``out`` matching the
    filters, newest per configuration group. All must share one data set and model."""
    if run_paths:
        runs = [load_run(p) for p in run_paths]
    else:
        runs = [r for r in find_runs(out) if r.meta.get("rounds_complete", 0) >= 1]
        if not runs:
            raise CollapseLabError(f"no trained runs in {out}; run `collapse-lab train` first or pass --out/--run")
        want = {alpha_str(parse_alpha(a)) for a in alphas}
        if want:
            runs = [r for r in runs if r.meta.get("partition") == "dirichlet" and r.meta.get("alpha") in want]
        if dataset:
            runs = [r for r in runs if r.meta.get("dataset") == dataset]
        if model:
            runs = [r for r in runs if r.meta.get("model") == model]
        if regs:
            runs = [r for r in runs if r.meta.get("reg") in regs]
        if methods:
            runs = [r for r in runs if r.meta.get("method") in methods]
        if not runs:
            what = f"alpha {', '.join(sorted(want))}" if want else "those filters"
            raise CollapseLabError(f"no trained run with {what} in {out}; train one (collapse-lab train --alpha ...) or check --out")
        newest: dict[tuple, RunDir] = {}
        for r in runs:
            key = tuple(str(r.meta.get(k)) for k in GROUP_KEYS)
            if key not in newest or r.meta.get("created", "") >= newest[key].meta.get("created", ""):
                newest[key] = r
        runs = list(newest.values())
    for field in ("dataset", "model"):
        values = sorted({str(r.meta.get(field)) for r in runs})
        if len(values) > 1:
            raise CollapseLabError(f"the selected runs mix {field}s ({', '.join(values)}); choose one with --{field}")
    return sorted(runs, key=sort_key)


def sort_key(run: RunDir):
    m = run.meta
    return (float(parse_alpha(m.get("alpha", "inf"))) if m.get("partition") == "dirichlet" else 0.0,
            m.get("reg", ""), m.get("method", ""), run.path.name)


def pick_round(run: RunDir, r: int | None) -> int:
    done = int(run.meta.get("rounds_complete", 0))
    if r is None:
        return done
    if not 0 <= r <= done:
        raise CollapseLabError(f"--round {r}: {run.path.name} has rounds 0..{done}")
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
    bad = [r for r in rounds if not 0 <= r <= last]
    if not rounds or bad:
        raise CollapseLabError(f"--rounds {spec!r}: rounds must lie in 0..{last}")
    return sorted(set(rounds))


def describe(run: RunDir) -> str:
    m = run.meta
    part = f"alpha={m.get('alpha')}" if m.get("partition") == "dirichlet" else (
        f"M={m.get('classes_per_client')}" if m.get("partition") == "pathological" else m.get("partition", ""))
    extra = "" if m.get("reg") == "none" else f" + {m.get('reg')}"
    method = "" if m.get("method") == "fedavg" else f" {m.get('method')}"
    return f"{part}{method}{extra}"
