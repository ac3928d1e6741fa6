"""docs/scale/device_run.sh rehearsed on a CPU: a fresh checkout run from PYTHONPATH (nothing
installed), a micro-rung on digits, a first call killed mid-run (SIGKILL at round 3 of every
run), a second call that continues from the files the first returned, and final evidence
equal to an uninterrupted call's; every call's returned files within the limits."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MIB = 2 ** 20
pytestmark = pytest.mark.slow

MICRO = """rungs:
- name: micro
  set: {rounds: 4}
  seeds: [0]
  entries: [feddecorr-fig3]
"""


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """The tracked files as they are now, in a folder no install points at."""
    try:
        files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: a fresh checkout cannot be made")
    dest = tmp_path_factory.mktemp("fresh") / "repo"
    for name in filter(None, files.decode().split("\0")):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    return dest


def _call(repo: Path, tmp: Path, name: str, carry: Path, fault: str | None = None) -> tuple[str, Path]:
    (tmp / "micro.yaml").write_text(MICRO)
    out = tmp / f"out-{name}"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COLLAPSE_LAB_FAULT")}
    env.update(OUT=str(out), DATA="", RUNGS=str(tmp / "micro.yaml"), ENTRIES="feddecorr-fig3", PRESET="quick",
               REQUIRE_CUDA="0", WORKERS="1", STACK="1", CARRY=str(carry), WORK=str(tmp / f"work-{name}"))
    if fault:
        env["COLLAPSE_LAB_FAULT"] = fault
    proc = subprocess.run(["bash", "docs/scale/device_run.sh"], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert f"collapse_lab from {repo}" in proc.stdout  # the checkout's code, not an installed copy
    return proc.stdout, out


def _within_limits(out: Path) -> None:
    entries = list(out.iterdir())
    assert all(p.is_file() and re.fullmatch(r"[A-Za-z0-9._-]+", p.name) for p in entries)
    sizes = [p.stat().st_size for p in entries]
    assert len(entries) <= 8 and max(sizes) <= 16 * MIB and sum(sizes) <= 64 * MIB


def _hashes(log: str) -> list[str]:
    return re.findall(r"^([0-9a-f]{64})  (\S+-r4\.json)$", log, flags=re.M)


def test_a_killed_call_continues_in_the_next_and_ends_as_an_uninterrupted_one(checkout, tmp_path):
    log1, out1 = _call(checkout, tmp_path, "killed", tmp_path / "nothing", fault="client:3:0")
    _within_limits(out1)
    assert "within the limits" in log1 and not _hashes(log1)
    assert sorted(p.name for p in out1.iterdir()) == ["evidence.tar.gz", "log.txt", "pilot.json", "state.tar.000"]
    log2, out2 = _call(checkout, tmp_path, "continued", out1)
    _within_limits(out2)
    assert '"restored": ["digits_' in log2 and "run-rounds to train at" in log2  # the pilot's rate, measured
    log3, _ = _call(checkout, tmp_path, "uninterrupted", tmp_path / "nothing")
    assert len(_hashes(log2)) == 4 and _hashes(log2) == _hashes(log3)


def test_on_a_cpu_the_script_stops_after_its_dry_run(checkout, tmp_path):
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(OUT=str(out), CARRY=str(tmp_path / "none"), WORK=str(tmp_path / "work"))
    proc = subprocess.run(["bash", "docs/scale/device_run.sh"], cwd=checkout, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "resnet20-n1000-e10-lr0.01-r30-s5: feddecorr-fig2, feddecorr-fig3, journal-fig4, journal-fig6; 30 run(s)" \
        in proc.stdout
    assert "device_run: dry-run only (no CUDA device here" in proc.stdout
