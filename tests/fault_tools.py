"""What the fault tests share: the tiny runs they train, a ``collapse-lab`` subprocess and
the signals sent to it, waiting for a stored round, a folder's digest, one error line."""
from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

GAUSS = ["--dataset", "gaussian", "--dataset-option", "dim=8", "--dataset-option", "train_per_class=30",
         "--dataset-option", "test_per_class=5", "--clients", "3", "--local-epochs", "1", "--batch-size", "8",
         "--alpha", "0.5", "--probe", "0"]
# digits, 2 local epochs: about 0.06 s a round on 2 cores, so 3000 rounds outlive every check
LONG = ["--alpha", "0.5", "--local-epochs", "2", "--probe", "0", "--rounds", "3000"]


def cli_proc(*args, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "collapse_lab.entry", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def sigterm(proc: subprocess.Popen, timeout: float) -> str:
    """SIGTERM the process and wait for it; its stderr."""
    proc.send_signal(signal.SIGTERM)
    return proc.communicate(timeout=timeout)[1]


def wait_for_round(store: Path, r: int = 1, timeout: float = 60, runs: int = 1) -> list[Path]:
    t0 = time.time()
    while time.time() - t0 < timeout:
        found = []
        for d in store.glob("*/run.json") if store.is_dir() else []:
            try:
                if json.loads(d.read_text())["rounds_complete"] >= r:
                    found.append(d.parent)
            except (ValueError, KeyError, OSError):
                pass
        if len(found) >= runs:
            return found
        time.sleep(0.2)
    raise AssertionError(f"no run in {store} reached round {r} within {timeout} s")


def round_events(run: Path) -> list[int]:
    return [json.loads(line)["round"] for line in (run / "metrics.jsonl").read_text().splitlines()
            if '"event": "round"' in line]


def tree_digest(folder: Path) -> dict:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def one_error_line(res, code: int, *parts: str) -> None:
    assert res.exit_code == code, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    for p in parts:
        assert p in lines[0], lines[0]
