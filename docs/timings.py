"""The times the README and docs/analyses.md quote, measured on this machine.

    python docs/timings.py [--tests] [--out docs/timings.json]
    python docs/timings.py --table            # the Markdown table, from docs/timings.json

runs each command of the README's set-up and of the analyses' progress table in a fresh
folder (the default store: four digits runs of 30 rounds; the feature cache cold), with
``--tests`` also ``pytest -m quick`` (the edit-run subset) and ``pytest -n 2`` (the whole suite, the README's command),
and writes the wall times with the machine's facts: its cores, its load average before and after, and the share of the cores
that other processes used while it measured (a time measured beside other work is said as
such, not taken for an idle machine's).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMANDS = [  # (what, the command line): in this order, each on the store the first makes
    ("train", ["collapse-lab", "train"]),
    ("spectrum", ["collapse-lab", "spectrum"]),
    ("theory prop1", ["collapse-lab", "theory", "prop1"]),
    ("theory thm1", ["collapse-lab", "theory", "thm1"]),
    ("cka", ["collapse-lab", "cka"]),
    ("nc", ["collapse-lab", "nc"]),
    ("report", ["collapse-lab", "report", "--html", "report.html"]),
]
UNITS = {"train": "4 runs of 30 rounds, two at a time", "spectrum": "one per run", "theory prop1": "one per matrix size",
         "theory thm1": "3 step sizes, then one per alpha", "cka": "one per run", "nc": "one per run",
         "report": "one per run", "pytest -m quick": "the edit-run subset", "pytest -n 2": "the whole suite, two processes",
         "pytest": "the whole suite"}
TESTS = [("pytest -m quick", [sys.executable, "-m", "pytest", "-q", "-m", "quick", "-p", "no:cacheprovider"]),
         ("pytest -n 2", [sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider"])]


def timed(cmd: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return round(time.perf_counter() - t0, 1)


def busy_seconds() -> float | None:
    """CPU seconds the whole machine has spent busy since boot (/proc/stat: every state but
    idle and iowait), or None where there is no /proc/stat."""
    try:
        f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    return (sum(f) - f[3] - f[4]) / os.sysconf("SC_CLK_TCK")


def others_share(busy: float, ours: float, wall: float, cores: int) -> float:
    """The share of the cores that processes other than the measured ones used: the machine's
    busy CPU time less the measured commands' own, over wall time x cores."""
    return max(0.0, busy - ours) / (wall * cores)


def measure(tests: bool) -> dict:
    import resource

    load0 = os.getloadavg()
    busy0, ours0, t0 = busy_seconds(), resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    out = {"cores": os.cpu_count(), "load_before": [round(x, 2) for x in load0], "seconds": {}}
    with tempfile.TemporaryDirectory() as d:
        for name, cmd in COMMANDS:
            out["seconds"][name] = timed(cmd, Path(d))
            print(f"{name}: {out['seconds'][name]} s", file=sys.stderr)
    for name, cmd in TESTS if tests else []:
        out["seconds"][name] = timed(cmd, REPO)
        print(f"{name}: {out['seconds'][name]} s", file=sys.stderr)
    out["load_after"] = [round(x, 2) for x in os.getloadavg()]
    ours1, busy1 = resource.getrusage(resource.RUSAGE_CHILDREN), busy_seconds()
    if busy0 is not None and busy1 is not None:  # the load after is the measured work's own: not a test of idleness
        ours = (ours1.ru_utime + ours1.ru_stime) - (ours0.ru_utime + ours0.ru_stime)
        out["others_share"] = round(others_share(busy1 - busy0, ours, time.perf_counter() - t0, out["cores"] or 1), 3)
        out["idle"] = load0[0] < 0.5 * (out["cores"] or 1) + 0.5 and out["others_share"] < 0.1
    else:
        out["idle"] = max(load0[0], out["load_after"][0]) < 0.5 * (out["cores"] or 1) + 0.5
    out["date"] = time.strftime("%Y-%m-%d")
    return out


def table(rec: dict) -> str:
    others = f", other processes {100 * rec['others_share']:.1f} % of the cores" if "others_share" in rec else ""
    where = (f"{rec['cores']} cores, {'idle' if rec['idle'] else 'loaded'} (load {rec['load_before'][0]} before, "
             f"{rec['load_after'][0]} after{others}), {rec['date']}")
    rows = "\n".join(f"| `{k if k.startswith('pytest') else 'collapse-lab ' + k}` | {UNITS.get(k, '')} | {v} s |"
                     for k, v in rec["seconds"].items())
    return f"| command | progress units | time ({where}) |\n|---|---|---|\n{rows}"


def main(argv: list[str]) -> int:
    path = Path(argv[argv.index("--out") + 1]) if "--out" in argv else REPO / "docs" / "timings.json"
    if "--table" in argv:
        print(table(json.loads(path.read_text())))
        return 0
    rec = measure("--tests" in argv)
    path.write_text(json.dumps(rec, indent=1) + "\n")
    print(json.dumps(rec, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
