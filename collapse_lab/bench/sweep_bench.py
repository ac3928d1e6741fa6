"""``collapse-lab bench --sweep``: runs per hour of a grid of small runs trained three ways,
in one invocation: one ``train`` invocation (one run after another), the sweep's local
backend (one run per worker), and the sweep's local backend with ``--stack`` (the runs of
each worker trained as one stacked model, ``training.stacked``).

The grid is the default ``train`` (digits, its default model, the paper preset) over the
four analysis alphas x ``seeds`` seeds. All three write real stores in a temporary folder.
Final global checkpoints: the plain sweep's must equal ``train``'s byte for byte (its
workers train at one thread per lane, as ``train`` does on this machine's cores); the
stacked sweep's agree to fp32 round-off, reported as the largest difference relative to
the tensor's largest entry.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..config import DEFAULT_ALPHAS, alpha_str


def _max_rel_diff(a: Path, b: Path, r: int) -> float:
    """The largest relative difference between two runs' global models of round ``r``."""
    from ..store import RunDir

    x, y = RunDir(a).load_global(r), RunDir(b).load_global(r)
    return max(float((x[k] - y[k]).abs().max() / x[k].abs().max().clamp(min=1e-30)) for k in x)


def _same_global(a: Path, b: Path, r: int) -> bool:
    from ..store import RunDir

    return RunDir(a).checkpoint_sha256(r) == RunDir(b).checkpoint_sha256(r)


def _one_train(store: Path, alphas: list[str], seeds: int, rounds: int | None) -> float:
    """Seconds of one ``collapse-lab train`` of every alpha and seed into ``store``."""
    cmd = [sys.executable, "-m", "collapse_lab.cli", "train", "--store", str(store)]
    for a in alphas:
        cmd += ["--alpha", a]
    for s in range(seeds):
        cmd += ["--seed", str(s)]
    if rounds:
        cmd += ["--rounds", str(rounds)]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - t0


def sweep_bench(seeds: int, workers: int, rounds: int | None = None, say=None, stack: int | None = None) -> dict:
    from ..store import RunDir
    from ..sweep.backends import cores, run_local, units

    from ..runspec.expand import expand

    say = say or (lambda m: None)
    alphas = [alpha_str(a) for a in DEFAULT_ALPHAS]
    base = {"rounds": rounds} if rounds else {}
    configs = expand({"base": base, "grid": {"alpha": alphas}, "seeds": list(range(seeds))}, "bench --sweep")
    n = len(configs)
    stack = stack or -(-n // workers)  # one stack per worker
    with tempfile.TemporaryDirectory(prefix="collapse-lab-sweep-bench-") as tmp:
        tmp = Path(tmp)
        say(f"bench --sweep: {n} runs by one train invocation")
        seq = _one_train(tmp / "seq", alphas, seeds, rounds)
        say(f"  {seq:.1f} s; now through the sweep's local backend, {workers} workers, one run each")
        t0 = time.perf_counter()
        plain = run_local(units(configs, 1, lambda c: None), tmp / "sweep", workers, lambda ev: None, tmp / "logs")
        swp = time.perf_counter() - t0
        say(f"  {swp:.1f} s; now {workers} workers with --stack {stack}")
        t0 = time.perf_counter()
        stacked = run_local(units(configs, stack, lambda c: None), tmp / "stacked", workers, lambda ev: None,
                            tmp / "logs-stacked")
        stk = time.perf_counter() - t0
        say(f"  {stk:.1f} s")
        same = sum(_same_global(tmp / "seq" / c.run_name(), tmp / "sweep" / c.run_name(), c.rounds) for c in configs)
        rel = [_max_rel_diff(tmp / "seq" / c.run_name(), tmp / "stacked" / c.run_name(), c.rounds) for c in configs
               if RunDir(tmp / "stacked" / c.run_name()).has_global(c.rounds)]
        accs = {name: [_final_acc(tmp / name / c.run_name()) for c in configs] for name in ("seq", "stacked")}
    failed = [r for r in plain + stacked if r["status"] != "complete"]
    return {"runs": n, "cores": cores(), "workers": workers, "stack": stack, "rounds": configs[0].rounds,
            "sequential_seconds": round(seq, 2), "sweep_seconds": round(swp, 2), "stacked_seconds": round(stk, 2),
            "sequential_runs_per_hour": round(n * 3600 / seq, 1), "sweep_runs_per_hour": round(n * 3600 / swp, 1),
            "stacked_runs_per_hour": round(n * 3600 / stk, 1),
            "ratio": round(seq / swp, 3), "stacked_ratio": round(seq / stk, 3), "failed": len(failed),
            "identical_final_globals": same,
            "stacked_max_rel_diff": max(rel) if rel else None, "stacked_median_rel_diff": sorted(rel)[len(rel) // 2]
            if rel else None,
            "mean_final_acc_sequential": _mean(accs["seq"]), "mean_final_acc_stacked": _mean(accs["stacked"]),
            "max_final_acc_diff": max((abs(a - b) for a, b in zip(accs["seq"], accs["stacked"])
                                       if a is not None and b is not None), default=None)}


def _final_acc(path: Path) -> float | None:
    from ..store import RunDir

    # a run that failed before its first round has no metrics file: no rounds
    rounds = [e for e in RunDir(path).metrics() if e.get("event") == "round"]
    return rounds[-1].get("test_acc") if rounds else None


def _mean(xs: list) -> float | None:
    xs = [x for x in xs if x is not None]
    return round(sum(xs) / len(xs), 4) if xs else None


def sweep_text(r: dict) -> str:
    """``sweep_bench``'s result as one line: runs/hour one after another, as a sweep, stacked."""
    return (f"{r['runs']} runs of {r['rounds']} rounds on {r['cores']} cores: one train invocation "
            f"{r['sequential_seconds']:.1f} s ({r['sequential_runs_per_hour']:.0f} runs/h); sweep with "
            f"{r['workers']} workers {r['sweep_seconds']:.1f} s ({r['sweep_runs_per_hour']:.0f} runs/h, "
            f"{r['ratio']:.2f}x; {r['identical_final_globals']} of {r['runs']} final global models identical); "
            f"with --stack {r['stack']} {r['stacked_seconds']:.1f} s ({r['stacked_runs_per_hour']:.0f} runs/h, "
            f"{r['stacked_ratio']:.2f}x; final globals within {r['stacked_max_rel_diff']:.1e} of the largest "
            f"entry, median {r['stacked_median_rel_diff']:.1e}; mean final test acc "
            f"{r['mean_final_acc_sequential']:.4f} vs {r['mean_final_acc_stacked']:.4f}); {r['failed']} failed")
