"""``--backend slurm`` against a real SLURM (CI starts a single-node one: ``.ci/slurm-up``):
three digits runs submitted by two sweeps, one of them with a training time short enough that
its job requeues itself; a second submission of the same grid trains nothing twice; every
run ends complete with checkpoints equal byte for byte to a local sweep's; ``--status``
names each job; ``figures`` trains an entry's runs as jobs and renders. Skips, saying why, where no SLURM controller answers."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

SHORT = "base: {rounds: 3, local_epochs: 1, clients: 4, keep_local: last}\ngrid: {alpha: [0.1, 1.0]}\nseeds: [0]\n"
# two runs: one job array whose two tasks each requeue themselves (by their own id, A_i)
LONG = "base: {rounds: 200, local_epochs: 1, clients: 4, keep_local: last}\ngrid: {alpha: [0.5, inf]}\nseeds: [0]\n"


def _why_no_slurm() -> str | None:
    try:
        import submitit  # noqa: F401
    except ImportError:
        return "submitit is not installed (pip install -e '.[slurm]')"
    if shutil.which("sinfo") is None or shutil.which("sbatch") is None:
        return "no SLURM tools on PATH (.ci/slurm-up installs and starts a single-node SLURM)"
    out = subprocess.run(["sinfo", "-h", "-o", "%R %T"], capture_output=True, text=True)
    if out.returncode != 0 or not out.stdout.strip():
        return f"no SLURM controller answers ({(out.stderr or 'no partition').strip().splitlines()[0]})"
    if not any(s in out.stdout for s in ("idle", "mixed", "alloc")):
        return f"no SLURM node is up ({out.stdout.strip()})"
    return None


def cl(*args, timeout=900):
    """The installed command line, as a user runs it; (exit status, stdout, stderr, seconds)."""
    t0 = time.time()
    p = subprocess.run([sys.executable, "-c", "from collapse_lab.entry import main; main()", *map(str, args)],
                       capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr, time.time() - t0


def digests(store: Path) -> dict[str, str]:
    """sha256 of every checkpoint of every run (tensors only: run.json and metrics hold times)."""
    return {str(p.relative_to(store)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(store.glob("*/**/*.safetensors"))}


def _reference(tmp_path):
    """The local sweeps both grids are compared with, and what a job's training time must be
    for the long run to need two jobs: the start-up (a command that plans the runs and trains
    nothing) and half of its training."""
    short, long = tmp_path / "short.yaml", tmp_path / "long.yaml"
    short.write_text(SHORT)
    long.write_text(LONG)
    local = tmp_path / "local"
    for spec in (short, long):
        rc, _, err, _ = cl("sweep", spec, "--store", local, "--workers", "1")
        assert rc == 0, err
    _, _, _, startup = cl("sweep", long, "--store", local, "--dry-run")
    (run_long,) = [p for p in local.iterdir() if "_dir0.5_" in p.name]
    train = json.loads((run_long / "run.json").read_text())["train_seconds"]
    limit = f"{startup + 0.5 * train:.1f}s"
    print(f"\nstart-up {startup:.1f} s, the long run trains {train:.1f} s: each job trains for --time-limit {limit}")
    return short, long, local, limit


def _submit(short, long, store, common, limit):
    """Bad input first (one line, exit 2, nothing submitted); then the long grid as one array
    of two tasks, and the short grid held (sbatch --hold), so that its jobs are surely queued
    when the grid comes again. The long grid's job ids and the short runs' jobs."""
    rc, out, err, _ = cl("sweep", short, *common, "--slurm-partition", "no-such-partition")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "no such partition on this cluster" in err, err
    assert not store.exists()
    rc, _, err, _ = cl("sweep", long, *common, "--time-limit", limit)
    assert rc == 0 and "watch with: " in err, err
    print(err.strip())
    long_jobs = re.search(r"SLURM job\(s\): ([0-9_, ]+);", err).group(1).split(", ")
    assert len(long_jobs) == 2 and all("_" in j for j in long_jobs), long_jobs  # one array, two tasks
    rc, out, err, _ = cl("sweep", short, *common, "--slurm-option", "hold=", "--json")
    assert rc == 0, err
    jobs = {r["runs"][0]: r["job_id"] for r in json.loads(out)["submitted"]}
    assert len(jobs) == 2, out
    print(err.strip())
    return long_jobs, jobs


def _short_grid_again(short, common, jobs):
    """The same grid again: its runs are queued, so nothing is submitted; --wait watches the
    first sweep's jobs to their end (released once the second sweep has named them)."""
    p = subprocess.Popen([sys.executable, "-c", "from collapse_lab.entry import main; main()", "sweep", str(short),
                          *map(str, common), "--wait", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    seen = []
    for line in p.stderr:
        seen.append(line)
        if sum("not submitted again" in ln for ln in seen) == 2:
            break
    subprocess.run(["scontrol", "release", *jobs.values()], check=True)
    out, rest = p.communicate(timeout=900)
    rc, err = p.returncode, "".join(seen) + rest
    assert rc == 0, err
    assert sum("not submitted again" in ln for ln in err.splitlines()) == 2, err
    results = json.loads(out[out.index("{"):])["results"]
    assert {r["run"]: r["job_id"] for r in results} == jobs and {r["status"] for r in results} == {"complete"}


def _long_grid_while_it_runs(long, common, limit, long_jobs) -> list[dict]:
    """A second sweep of the long grid while its tasks run (each holds its run's lock): the
    runs are skipped, named with their jobs as squeue shows them (A_i), and watched to the
    end, each requeued at least once."""
    for _ in range(600):
        q = subprocess.run(["squeue", "-h", "-r", "-o", "%i %T"], capture_output=True, text=True).stdout
        if any(ln.split() in ([j, "RUNNING"] for j in long_jobs) for ln in q.splitlines()):
            break
        time.sleep(0.5)
    print("squeue when the second long sweep starts:", " | ".join(q.split("\n")))
    rc, out, err, _ = cl("sweep", long, *common, "--time-limit", limit, "--wait", "--json")
    assert rc == 0, err
    print(err.strip())
    assert "being written by" not in err and sum("not submitted again" in ln for ln in err.splitlines()) == 2, err
    res = json.loads(out[out.index("{"):])["results"]
    assert len(res) == 2 and all(r["status"] == "complete" and r["requeues"] >= 1 for r in res), res
    assert all("_" in r["job_id"] for r in res), res  # array tasks, by their squeue ids
    return res


def _status_names_each_job(long, store, res):
    """--status: each run complete, with its job, its requeues and the job's events."""
    rc, out, err, _ = cl("sweep", long, "--store", store, "--status", "--json")
    assert rc == 0, err
    by_run = {r["run"]: r for r in res}
    for row in json.loads(out)["runs"]:
        assert row["store"] == "complete" and row["job_id"] == by_run[row["run"]]["job_id"]
        assert row["requeues"] == by_run[row["run"]]["requeues"]
        ev = json.loads((store / ".slurm" / "runs" / f"{row['run']}.job-{row['job_id']}.json").read_text())["events"]
        events = [e["event"] for e in ev]
        print("job", row["job_id"], "events:", events, "| SLURM state:", row["slurm"],
              "| requeue read back:", [e.get("slurm_state") for e in ev if e["event"] == "requeued"])
        assert events[:3] == ["started", "requeued", "started"] and events[-1] == "ended"
        assert all("Restarts=" in e["slurm_state"] for e in ev if e["event"] == "requeued")
        # train_seconds sums the job's starts: more than the whole last start (timestamps in whole seconds)
        stamp = lambda e: time.mktime(time.strptime(e["at"], "%Y-%m-%dT%H:%M:%S%z"))  # noqa: E731
        last = stamp(ev[-1]) - stamp([e for e in ev if e["event"] == "started"][-1])
        meta = json.loads((store / row["run"] / "run.json").read_text())
        print(f"  train_seconds {meta['train_seconds']:.1f} s, the last start {last:.0f} s")
        assert meta["train_seconds"] > last + 2


def _figures_on_slurm(tmp_path):
    """figures take the same backend: the smoke runs of one entry as jobs, waited for, then rendered."""
    rc, out, err, _ = cl("figures", "feddecorr-fig1", "--smoke", "--backend", "slurm", "--slurm-cpus", "1",
                         "--slurm-time", "5", "--poll", "1", "--store", tmp_path / "fig-store", "--out", tmp_path / "fig")
    assert rc == 0 and "on slurm (one SLURM job each" in err and (tmp_path / "fig" / "feddecorr-fig1.png").is_file(), err
    assert len(list((tmp_path / "fig-store" / ".slurm" / "runs").glob("*.job-*.json"))) == 3


def test_a_sweep_on_slurm_requeues_trains_each_run_once_and_equals_a_local_sweep(tmp_path):
    why = _why_no_slurm()
    if why:
        pytest.skip(why)
    short, long, local, limit = _reference(tmp_path)
    store = tmp_path / "cluster"
    common = ["--backend", "slurm", "--store", store, "--slurm-cpus", "1", "--slurm-time", "5", "--poll", "1"]
    long_jobs, jobs = _submit(short, long, store, common, limit)
    _short_grid_again(short, common, jobs)
    res = _long_grid_while_it_runs(long, common, limit, long_jobs)
    _status_names_each_job(long, store, res)
    mine, theirs = digests(store), digests(local)
    assert len(mine) == len(theirs) > 200 and mine == theirs
    print(f"{len(mine)} checkpoint files, sha256 equal to the local sweep's; runs:",
          {n[:40]: hashlib.sha256("".join(v for k, v in sorted(mine.items()) if k.startswith(n)).encode())
           .hexdigest()[:16] for n in sorted({k.split(os.sep)[0] for k in mine})})
    _figures_on_slurm(tmp_path)
