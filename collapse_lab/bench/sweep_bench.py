"""``collapse-lab bench --sweep``: runs per hour of a grid of small runs through the sweep's
local backend against the same runs trained by one ``train`` invocation, one after another.

The grid is the default ``train`` (digits, its default model, the paper preset) over the
four analysis alphas x ``seeds`` seeds. Both write real stores in a temporary folder; the
two stores' final global checkpoints are compared byte for byte (the sweep's workers train
at one thread per lane, as ``train`` does on this machine's cores).
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..config import DEFAULT_ALPHAS, alpha_str


def sweep_bench(seeds: int, workers: int, rounds: int | None = None, say=None) -> dict:
    from ..sweep.backends import cores, run_local
    from ..sweep.spec import expand

    say = say or (lambda m: None)
    alphas = [alpha_str(a) for a in DEFAULT_ALPHAS]
    base = {"rounds": rounds} if rounds else {}
    configs = expand({"base": base, "grid": {"alpha": alphas}, "seeds": list(range(seeds))}, "bench --sweep")
    with tempfile.TemporaryDirectory(prefix="collapse-lab-sweep-bench-") as tmp:
        tmp = Path(tmp)
        cmd = [sys.executable, "-m", "collapse_lab.cli", "train", "--out", str(tmp / "seq")]
        for a in alphas:
            cmd += ["--alpha", a]
        for s in range(seeds):
            cmd += ["--seed", str(s)]
        if rounds:
            cmd += ["--rounds", str(rounds)]
        say(f"bench --sweep: {len(configs)} runs by one train invocation")
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        seq = time.perf_counter() - t0
        say(f"  {seq:.1f} s; now the same runs through the sweep's local backend, {workers} workers")
        t0 = time.perf_counter()
        results = run_local(configs, tmp / "sweep", workers, lambda ev: None, tmp / "logs")
        swp = time.perf_counter() - t0
        failed = [r for r in results if r["status"] != "complete"]
        same = sum((tmp / "seq" / c.run_name() / f"round_{c.rounds}" / "global.safetensors").read_bytes()
                   == (tmp / "sweep" / c.run_name() / f"round_{c.rounds}" / "global.safetensors").read_bytes()
                   for c in configs)
    n = len(configs)
    return {"runs": n, "cores": cores(), "workers": workers, "rounds": configs[0].rounds,
            "sequential_seconds": round(seq, 2), "sweep_seconds": round(swp, 2),
            "sequential_runs_per_hour": round(n * 3600 / seq, 1), "sweep_runs_per_hour": round(n * 3600 / swp, 1),
            "ratio": round(seq / swp, 3), "failed": len(failed), "identical_final_globals": same}
