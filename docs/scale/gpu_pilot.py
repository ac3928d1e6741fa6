"""The GPU rung's pilot (docs/scale/gpu_rung.sh): from the pilot stores' round timings, the
training throughput with 1 and with K concurrent processes, the workers to use, and the
rung's estimated time. Usage: python docs/scale/gpu_pilot.py RUNS ROUNDS IMAGES_PER_ROUND
STORE_1 STORE_K (prints JSON; the last line is the workers to use)."""
from __future__ import annotations

import json
import sys
from pathlib import Path


def round_seconds(store: Path) -> list[list[float]]:
    """Per run of the store, the seconds of each round it completed (round 0 excluded)."""
    out = []
    for m in sorted(store.glob("*/metrics.jsonl")):
        secs = [ev["seconds"] for ev in map(json.loads, m.read_text().splitlines())
                if ev.get("event") == "round" and ev.get("round", 0) > 0 and "seconds" in ev]
        out.append(secs)
    return out


def rate(store: Path, images_per_round: float) -> tuple[float, int, int]:
    """(aggregate training images a second, processes, rounds measured): each process's
    images over its mean round time, summed over the processes that ran at once."""
    runs = [s for s in round_seconds(store) if s]
    if not runs:
        return 0.0, 0, 0
    return sum(images_per_round / (sum(s) / len(s)) for s in runs), len(runs), sum(len(s) for s in runs)


def main(argv: list[str]) -> None:
    runs, rounds, per_round = int(argv[0]), int(argv[1]), float(argv[2])
    one, many = Path(argv[3]), Path(argv[4])
    r1, n1, m1 = rate(one, per_round)
    rk, nk, mk = rate(many, per_round)
    best, workers = (rk, nk) if rk > 1.1 * r1 else (r1, 1)
    total = runs * rounds * per_round
    print(json.dumps({"one_process": {"images_per_s": r1, "rounds_measured": m1},
                      "concurrent": {"processes": nk, "images_per_s": rk, "rounds_measured": mk},
                      "workers": workers, "rung_images": total,
                      "rung_hours": None if best == 0 else total / best / 3600}, indent=1))
    print(workers)


if __name__ == "__main__":
    main(sys.argv[1:])
