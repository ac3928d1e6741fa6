"""Where a sweep's runs execute: ``local`` (a pool of worker processes on this machine) or
``ray`` (one Ray task per run, on an existing cluster or a local instance).

Both hand a worker a resolved run configuration and the store, and get its outcome back;
runs land in the store as ``train`` writes them (on Ray the store must be on a filesystem
every node sees). A failing or crashing run does not stop the others.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from ..config import RunConfig
from ..errors import CollapseLabError
from ..io import make_dirs


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def threads_per_worker(workers: int) -> int:
    """Each worker's share of the cores: two trainings on 2 cores that both use 2 threads
    ran 10x slower than one."""
    return max(1, cores() // max(1, workers))


class Interrupted(Exception):
    """Ctrl-C during a sweep: the runs under way were stopped after their current client."""


def run_local(configs: list[RunConfig], store: Path, workers: int, report: Callable[[dict], None],
              log_dir: Path) -> list[dict]:
    """Each run in a ``python -m collapse_lab.sweep.worker`` process, ``workers`` at a time,
    each at its share of the cores; its log goes to ``log_dir/<run>.log``."""
    threads = threads_per_worker(workers)
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    make_dirs(log_dir)
    queue, running, results = list(configs), {}, []
    try:
        while queue or running:
            while queue and len(running) < workers:
                cfg = queue.pop(0)
                logf = open(log_dir / f"{cfg.run_name()}.log", "a")
                proc = subprocess.Popen([sys.executable, "-m", "collapse_lab.sweep.worker", str(store), str(threads)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=logf, env=env, text=True)
                proc.stdin.write(json.dumps(cfg.to_json()))
                proc.stdin.close()
                running[proc] = (cfg, logf, time.time())
                report({"event": "start", "run": cfg.run_name()})
            time.sleep(0.2)
            for proc in [p for p in running if p.poll() is not None]:
                cfg, logf, t0 = running.pop(proc)
                logf.close()
                results.append(_outcome(proc, cfg, log_dir, time.time() - t0))
                report({"event": "end", **results[-1]})
    except KeyboardInterrupt:
        for proc in running:
            proc.send_signal(signal.SIGTERM)  # the worker finishes its current client
        for proc, (cfg, logf, _) in running.items():
            try:
                proc.wait(timeout=600)
            except subprocess.TimeoutExpired:
                proc.kill()
            logf.close()
        raise Interrupted from None
    return results


def _outcome(proc: subprocess.Popen, cfg: RunConfig, log_dir: Path, seconds: float) -> dict:
    out = proc.stdout.read().strip().splitlines()
    try:
        res = json.loads(out[-1]) if out else None
    except json.JSONDecodeError:
        res = None
    if res is None:
        tail = (log_dir / f"{cfg.run_name()}.log").read_text().strip().splitlines()[-1:] or [""]
        how = f"killed by signal {-proc.returncode}" if proc.returncode < 0 else f"exit status {proc.returncode}"
        res = {"run": cfg.run_name(), "status": "failed", "error": f"worker {how}; log: {tail[0][:200]}"}
    res["wall_seconds"] = round(seconds, 2)
    return res


def _ray_task(cfg_json: dict, store: str, threads: int) -> dict:
    from .worker import run_one

    return run_one(cfg_json, store, threads, log=lambda m: print(m, flush=True))


def run_ray(configs: list[RunConfig], store: Path, address: str | None, cpus_per_run: int, gpus_per_run: float,
            report: Callable[[dict], None]) -> list[dict]:
    """One Ray task per run with ``num_cpus``/``num_gpus`` declared; ``address`` None starts
    a local instance (with this machine's cores), ``auto`` or HOST:PORT joins a cluster."""
    try:
        import ray
    except ImportError:
        raise CollapseLabError("--backend ray needs Ray: pip install -e '.[ray]' (or pip install 'ray[default]')") from None
    try:
        if address:
            ray.init(address=address, include_dashboard=False, log_to_driver=True)
        else:
            ray.init(num_cpus=cores(), include_dashboard=False, log_to_driver=True)
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise CollapseLabError(f"--address {address}: cannot reach a Ray cluster ({str(e).splitlines()[0]})") from None
    try:
        remote = ray.remote(num_cpus=cpus_per_run, num_gpus=gpus_per_run, max_retries=0)(_ray_task)
        pending = {}
        for cfg in configs:
            pending[remote.remote(cfg.to_json(), str(store), cpus_per_run)] = (cfg, time.time())
            report({"event": "start", "run": cfg.run_name()})
        results = []
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            cfg, t0 = pending.pop(done[0])
            try:
                res = ray.get(done[0])
            except Exception as e:  # noqa: BLE001 -- a task that crashed
                res = {"run": cfg.run_name(), "status": "failed", "error": f"Ray task failed: {str(e).splitlines()[0]}"}
            res["wall_seconds"] = round(time.time() - t0, 2)
            results.append(res)
            report({"event": "end", **res})
        return results
    except KeyboardInterrupt:
        raise Interrupted from None
    finally:
        ray.shutdown()
