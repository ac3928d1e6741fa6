"""Where a sweep's runs execute: ``local`` (a pool of worker processes on this machine) or
``ray`` (one Ray task per run, on an existing cluster or a local instance).

Both hand a worker a *unit* (a list of resolved run configurations: one run, or runs that
train as one stack, ``units``) and the store, and get the outcomes back;
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
from ..files import make_dirs
from ..signals import SweepInterrupted, signame_of  # noqa: F401  (SweepInterrupted: raised here, imported from here)


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def threads_per_worker(workers: int) -> int:
    """Each worker's share of the cores: two trainings on 2 cores that both use 2 threads
    ran 10x slower than one."""
    return max(1, cores() // max(1, workers))


def units(configs: list[RunConfig], stack: int, reason: Callable[[RunConfig], str | None]) -> list[list[RunConfig]]:
    """The runs in units of work: with ``stack`` > 1, runs of one ``training.stackable.stack_key``
    that can stack (``reason`` None) in groups of at most ``stack``, as even as possible
    (40 runs, stack 20: two of 20); every other run alone. Largest units first."""
    from ..training.stackable import stack_key

    if stack <= 1:
        return [[c] for c in configs]
    alone, groups = [], {}
    for c in configs:
        if reason(c) is None:
            groups.setdefault(stack_key(c), []).append(c)
        else:
            alone.append([c])
    out = []
    for group in groups.values():
        parts = -(-len(group) // stack)
        size, extra = divmod(len(group), parts)
        at = 0
        for i in range(parts):
            n = size + (i < extra)
            out.append(group[at : at + n])
            at += n
    return sorted(out, key=len, reverse=True) + alone


class _Worker:
    """A long-lived worker process (``sweep.worker``) and the unit it is training."""

    def __init__(self, store: Path, threads: int, env: dict, log: Path, deadline: float | None = None):
        self.logf = open(log, "a")
        extra = [] if deadline is None else [repr(deadline)]
        self.proc = subprocess.Popen([sys.executable, "-m", "collapse_lab.sweep.worker", str(store), str(threads), *extra],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.logf, env=env,
                                     text=True, bufsize=1)
        self.log, self.unit, self.t0 = log, None, 0.0

    def give(self, unit: list[RunConfig]) -> None:
        self.unit, self.t0 = unit, time.time()
        self.proc.stdin.write(json.dumps([c.to_json() for c in unit]) + "\n")
        self.proc.stdin.flush()

    def result(self) -> list[dict]:
        """The current unit's outcomes (blocks until its line arrives or the worker dies)."""
        line = self.proc.stdout.readline()
        try:
            res = json.loads(line)
        except json.JSONDecodeError:
            self.proc.wait()
            rc = self.proc.returncode
            how = f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"
            res = [{"run": c.run_name(), "status": "failed", "error": f"worker {how}; {self.quote(c.run_name())}"}
                   for c in self.unit]
        for r in res:
            r["wall_seconds"] = round(time.time() - self.t0, 2)
        self.unit = None
        return res

    def quote(self, run: str) -> str:
        """The worker log's last line about ``run`` (a worker's log holds every unit it
        trained: its last line may be another run's), else where the log is."""
        try:
            lines = self.log.read_text(errors="replace").strip().splitlines()
        except OSError:
            lines = []
        mine = [ln for ln in lines if run in ln]
        return f"its last line in {self.log}: {mine[-1][:200]}" if mine else f"no line of it in {self.log}"

    def close(self) -> None:
        if self.proc.poll() is None:
            if not self.proc.stdin.closed:
                self.proc.stdin.close()
            self.proc.wait()
        self.logf.close()


def run_local(todo: list[list[RunConfig]], store: Path, workers: int, report: Callable[[dict], None],
              log_dir: Path, deadline: float | None = None) -> list[dict]:
    """The units on ``workers`` long-lived worker processes, each at its share of the
    cores; worker i logs to ``log_dir/worker-<i>.log``. A worker that dies fails its unit
    only: a fresh one takes its place. ``deadline`` (``--time-limit``): the workers stop
    their runs by it, and no unit starts after it (``not_started``)."""
    import selectors

    threads = threads_per_worker(workers)
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    make_dirs(log_dir)
    queue, results = list(todo), []
    pool = [_Worker(store, threads, env, log_dir / f"worker-{i}.log", deadline) for i in range(min(workers, len(todo)))]
    sel = selectors.DefaultSelector()
    try:
        for w in pool:
            if queue:
                _give(w, queue.pop(0), report)
                sel.register(w.proc.stdout, selectors.EVENT_READ, w)
        while len(sel.get_map()):
            for key, _ in sel.select():
                w = key.data
                late = False
                stopped = False
                for res in w.result():
                    results.append(res)
                    report({"event": "end", **res})
                    late = late or res["status"] == "time-limit"
                    stopped = stopped or res["status"] == "interrupted"
                sel.unregister(w.proc.stdout)
                # a run stopped for time (its next round would not fit), or the deadline passed:
                # nothing more starts; a worker stopped by a signal (it exits now): neither
                if late or stopped or (deadline is not None and time.time() >= deadline):
                    results += not_started(queue, report, "interrupted" if stopped and not late else "time-limit")
                    queue = []
                if w.proc.poll() is not None and queue:  # it died: a fresh worker in its place
                    w.close()
                    i = pool.index(w)
                    w = pool[i] = _Worker(store, threads, env, log_dir / f"worker-{i}.log", deadline)
                if queue:
                    _give(w, queue.pop(0), report)
                    sel.register(w.proc.stdout, selectors.EVENT_READ, w)
    except KeyboardInterrupt as e:  # Ctrl-C, or SIGTERM (signals.Terminated)
        _stop_workers(pool)
        raise SweepInterrupted(signame_of(e)) from None
    finally:
        for w in pool:
            w.close()
    return results


def not_started(queue: list[list[RunConfig]], report: Callable[[dict], None], status: str = "time-limit") -> list[dict]:
    """The outcomes of units left when ``--time-limit``'s deadline passed (or a worker was
    stopped by a signal: ``interrupted``)."""
    out = []
    why = "not started before the time limit" if status == "time-limit" else "not started: a worker was stopped"
    for unit in queue:
        for c in unit:
            res = {"run": c.run_name(), "status": status, "error": why, "wall_seconds": 0.0, "not_started": True}
            out.append(res)
            report({"event": "end", **res})
    return out


def _stop_workers(pool: list[_Worker], wait: float = 600) -> None:
    """Each worker finishes its current client, stores it and exits; an idle one (blocked
    on its input, which the signal's flag does not wake) gets the end of its input and exits
    at once; none is left behind (a second Ctrl-C while waiting kills them)."""
    for w in pool:
        if w.proc.poll() is None:
            w.proc.send_signal(signal.SIGTERM)
            if w.unit is None:
                try:
                    w.proc.stdin.close()
                except OSError:
                    pass  # it is exiting already
    try:
        for w in pool:
            try:
                w.proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                w.proc.kill()
    except KeyboardInterrupt:
        for w in pool:
            if w.proc.poll() is None:
                w.proc.kill()
                w.proc.wait()


def _give(w: _Worker, unit: list[RunConfig], report: Callable[[dict], None]) -> None:
    w.give(unit)
    for c in unit:
        report({"event": "start", "run": c.run_name()})


def _ray_task(unit: list[dict], store: str, threads: int, deadline: float | None = None) -> list[dict]:
    from ..training.stops import StopFlag
    from .worker import run_unit

    return run_unit(unit, store, threads, log=lambda m: print(m, flush=True), stop=StopFlag(deadline))


def run_ray(todo: list[list[RunConfig]], store: Path, address: str | None, cpus_per_run: int, gpus_per_run: float,
            report: Callable[[dict], None], deadline: float | None = None) -> list[dict]:
    """One Ray task per unit (a run, or a stack of runs) with ``num_cpus``/``num_gpus`` declared; ``address`` None starts
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
    pending: dict = {}
    try:
        remote = ray.remote(num_cpus=cpus_per_run, num_gpus=gpus_per_run, max_retries=0)(_ray_task)
        for unit in todo:
            pending[remote.remote([c.to_json() for c in unit], str(store), cpus_per_run, deadline)] = (unit, time.time())
            for c in unit:
                report({"event": "start", "run": c.run_name()})
        results = []
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            unit, t0 = pending.pop(done[0])
            try:
                res = ray.get(done[0])
            except Exception as e:  # noqa: BLE001 -- a task that crashed
                res = [{"run": c.run_name(), "status": "failed", "error": f"Ray task failed: {str(e).splitlines()[0]}"}
                       for c in unit]
            for r in res:
                r["wall_seconds"] = round(time.time() - t0, 2)
                results.append(r)
                report({"event": "end", **r})
        return results
    except KeyboardInterrupt as e:
        for ref in list(pending):  # on a cluster the tasks would go on without the driver
            try:
                ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001 -- a task that already ended
                pass
        raise SweepInterrupted(signame_of(e)) from None
    finally:
        ray.shutdown()
