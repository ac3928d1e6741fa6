"""The GPU rung's arithmetic for docs/scale/device_run.sh, from the store and the files a call
returns (prints JSON or lines; exit status 1 where the returned files break a limit):

- ``measure STORE PREV_PILOT WORKERS STACK``: the median seconds of a round over the rounds
  this machine trained (round events after each run's first round here: start-up, data
  loading and warm-up are outside them), in the configuration the rung ran (WORKERS x STACK
  runs at once), merged with the previous calls' measurements;
- ``calls PLAN STORE PILOT BUDGET``: the rounds the plan (``ladder --dry-run --json``) still
  needs and how many calls of BUDGET seconds that is at the pilot's rate;
- ``limits DIR``: the returned files against the limits (8 files, 16 MiB each, 64 MiB, no folder);
- ``room CARRY``: the bytes the unfinished runs' state may take so that the next call's
  checkout, data and carry travel within 62 MiB (every file here but .git/ and CARRY counts);
- ``hashes OUT``: each kept run evidence's sha256 with its time fields left out, to compare
  a run continued over several calls with an uninterrupted one.
"""
from __future__ import annotations

import hashlib
import json
import math
import statistics
import sys
from pathlib import Path

MIB = 2 ** 20
LIMITS = {"files": 8, "file_bytes": 16 * MIB, "total_bytes": 64 * MIB}


def _events(run: Path) -> list[dict]:
    p = run / "metrics.jsonl"
    out = []
    for line in (p.read_text().splitlines() if p.is_file() else []):
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a line cut by a kill
    return out


def timed_rounds(store: Path, since: dict[str, int]) -> dict[str, list[float]]:
    """Per run, the seconds of the rounds trained here: after ``since[run]`` (the rounds it
    had when it arrived), the first of them left out (the process's warm-up)."""
    out = {}
    for run in sorted(p for p in Path(store).iterdir() if (p / "run.json").is_file()) if Path(store).is_dir() else []:
        secs = [e["seconds"] for e in _events(run) if e.get("event") == "round" and "seconds" in e
                and e.get("round", 0) > since.get(run.name, 0) + 1]
        if secs:
            out[run.name] = secs
    return out


def measure(store: Path, prev: Path, workers: int, stack: int) -> dict:
    old = json.loads(prev.read_text()) if prev.is_file() else {}
    rounds = timed_rounds(store, old.get("rounds_at_arrival", {}))
    secs = [s for v in rounds.values() for s in v] + old.get("round_seconds", [])
    concurrent = workers * stack
    median = statistics.median(secs) if secs else None
    return {"round_seconds": secs[:2000], "median_round_seconds": median, "runs_at_once": concurrent,
            "run_rounds_per_second": None if not median else concurrent / median,
            "rounds_at_arrival": {p.name: json.loads((p / "run.json").read_text()).get("rounds_complete", 0)
                                  for p in Path(store).iterdir() if (p / "run.json").is_file()}
            if Path(store).is_dir() else {}}


def calls(plan: Path, store: Path, pilot: Path, budget: float) -> str:
    rows = json.loads(plan.read_text()) if plan.is_file() and plan.stat().st_size else []
    from collapse_lab.catalogue.ladder_checks import dry_lines

    plan_lines = "\n".join(dry_lines(rows)) + "\n" if rows else "the plan could not be made (see above)\n"
    rounds = sum(row["run_rounds"] for row in rows)  # the rounds of the runs no store holds complete
    metas = [json.loads((p / "run.json").read_text()) for p in Path(store).iterdir()
             if (p / "run.json").is_file()] if Path(store).is_dir() else []
    done = sum(m.get("rounds_complete", 0) for m in metas if m.get("status") != "complete")  # of the unfinished
    left = max(rounds - done, 0)
    rate = json.loads(pilot.read_text()).get("run_rounds_per_second") if pilot.is_file() else None
    if not rate:
        return plan_lines + (f"gpu_pilot: {left} run-rounds to train; no pilot yet (the first call measures the round time in the "
                f"rung's configuration; the dry-run then says how many calls of {budget:.0f} s it needs)")
    return plan_lines + (f"gpu_pilot: {left} run-rounds to train at {rate:.3f} run-rounds a second (measured): about "
            f"{left / rate / 60:.1f} min, {math.ceil(left / rate / budget)} call(s) of {budget:.0f} s")


def limits(folder: Path) -> tuple[bool, str]:
    entries = sorted(Path(folder).iterdir())
    files = [p for p in entries if p.is_file()]
    bad = [f"{p.name} is a folder" for p in entries if p.is_dir()]
    bad += [f"{p.name} is {p.stat().st_size / MIB:.1f} MiB" for p in files if p.stat().st_size > LIMITS["file_bytes"]]
    total = sum(p.stat().st_size for p in files)
    if len(files) > LIMITS["files"]:
        bad.append(f"{len(files)} files")
    if total > LIMITS["total_bytes"]:
        bad.append(f"{total / MIB:.1f} MiB in all")
    head = f"returned: {len(files)} file(s), {total / MIB:.2f} MiB in all, the largest " + (
        f"{max(p.stat().st_size for p in files) / MIB:.2f} MiB" if files else "none")
    return not bad, head + ("; within the limits" if not bad else "; OVER THE LIMITS: " + ", ".join(bad))


def room(carry: Path, here: Path = Path(".")) -> int:
    carry = carry.resolve()
    used = 0
    for p in here.resolve().rglob("*"):
        if ".git" in p.parts or p == carry or carry in p.parents or not p.is_file() or p.is_symlink():
            continue
        used += p.stat().st_size
    return max(0, min(40 * MIB, 62 * MIB - used - 2 * MIB))  # 2 MiB for the evidence and the log


def _timeless(v):
    if isinstance(v, dict):
        return {k: _timeless(x) for k, x in v.items() if "seconds" not in k and k != "wall"}
    if isinstance(v, list):
        return [_timeless(x) for x in v]
    return v


def hashes(out: Path) -> list[str]:
    runs = sorted((Path(out) / "records" / "runs").glob("*.json"))
    return [f"{hashlib.sha256(json.dumps(_timeless(json.loads(p.read_text())), sort_keys=True).encode()).hexdigest()}"
            f"  {p.name}" for p in runs]


def main(argv: list[str]) -> int:
    cmd, args = (argv[0], argv[1:]) if argv else ("", [])
    if cmd == "measure" and len(args) == 4:
        print(json.dumps(measure(Path(args[0]), Path(args[1]), int(args[2]), int(args[3])), indent=1))
    elif cmd == "calls" and len(args) == 4:
        print(calls(Path(args[0]), Path(args[1]), Path(args[2]), float(args[3])))
    elif cmd == "limits" and len(args) == 1:
        ok, line = limits(Path(args[0]))
        print(line)
        return 0 if ok else 1
    elif cmd == "room" and len(args) == 1:
        print(room(Path(args[0])))
    elif cmd == "hashes" and len(args) == 1:
        print("\n".join(hashes(Path(args[0]))) or "no run evidence kept yet")
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
