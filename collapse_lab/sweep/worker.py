"""A unit of a sweep: one run, or several runs trained as one stack (``training.stacked``), each
as ``train --resume`` would do it: skipped when complete, continued when unfinished,
trained when missing. Called in a worker process of the local backend (``python -m
collapse_lab.sweep.worker STORE THREADS [DEADLINE]``: a JSON list of run configurations per stdin
line, a JSON list of their outcomes per stdout line) or inside a Ray task."""
from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path


def run_one(cfg_json: dict, store: str, threads: int, log=None, stop=None) -> dict:
    """Train one run into ``store`` at ``threads`` intra-op threads; returns its outcome:
    ``status`` complete / skipped / diverged / failed, with the one-line ``error``."""
    import torch

    from ..config import RunConfig
    from ..errors import CollapseLabError
    from ..training.engine import train
    from ..training.stops import Diverged, Interrupted
    from ..training.prepare import prepare

    torch.set_num_threads(max(1, threads))
    cfg = RunConfig.from_json(cfg_json)
    try:
        (p,) = prepare([cfg], Path(store), resume=True)
        if p.action == "skip":
            return {"run": p.path.name, "status": "skipped"}
        out = train(p, log=log, stop=stop)
        return {"run": p.path.name, "status": "complete", "final_test_acc": out["final_test_acc"],
                "seconds": out["seconds"], "resumed_from": p.start}
    except Diverged as e:
        return {"run": e.path.name, "status": "diverged", "error": str(e)}
    except Interrupted as e:
        return {"run": e.path.name, "status": stopped_status(e), "error": str(e)}
    except CollapseLabError as e:
        return {"run": cfg.run_name(), "status": "failed", "error": str(e)}


def stopped_status(e) -> str:
    """A run's outcome when it stopped early: ``time-limit`` (``--time-limit``; the same
    command continues it) or ``interrupted`` (a signal)."""
    from ..timelimit import TIME_LIMIT

    return "time-limit" if e.signame == TIME_LIMIT else "interrupted"


def run_unit(unit: list[dict], store: str, threads: int, log=None, stop=None) -> list[dict]:
    """One run (``run_one``) or several trained together; an outcome per run, in order."""
    if len(unit) == 1:
        return [run_one(unit[0], store, threads, log, stop)]
    import torch

    from ..config import RunConfig
    from ..errors import CollapseLabError
    from ..training.stops import Diverged, Interrupted
    from ..training.prepare import prepare
    from ..training.stacked import train_together

    torch.set_num_threads(max(1, threads))
    cfgs = [RunConfig.from_json(c) for c in unit]
    try:
        preps = prepare(cfgs, Path(store), resume=True)
    except CollapseLabError as e:
        return [{"run": c.run_name(), "status": "failed", "error": str(e)} for c in cfgs]
    todo = [p for p in preps if p.action != "skip"]
    outs = dict(zip([p.path.name for p in todo], train_together(todo, log=log, stop=stop)))
    results = []
    for p in preps:
        o = outs.get(p.path.name)
        if p.action == "skip":
            results.append({"run": p.path.name, "status": "skipped"})
        elif isinstance(o, dict):
            results.append({"run": p.path.name, "status": "complete", "final_test_acc": o["final_test_acc"],
                            "seconds": o["seconds"], "resumed_from": p.start, "stacked": len(todo)})
        elif isinstance(o, Diverged):
            results.append({"run": p.path.name, "status": "diverged", "error": str(o)})
        elif isinstance(o, Interrupted):
            results.append({"run": p.path.name, "status": stopped_status(o), "error": str(o)})
        elif isinstance(o, CollapseLabError):
            results.append({"run": p.path.name, "status": "failed", "error": str(o)})
        else:
            results.append({"run": p.path.name, "status": "failed", "error": f"internal error: {type(o).__name__}: {o}"})
    return results


def unit_name(cfg_json: dict) -> str:
    """The run a unit's configuration names, for an outcome line even when training failed."""
    try:
        from ..config import RunConfig

        return RunConfig.from_json(cfg_json).run_name()
    except Exception:  # noqa: BLE001 -- a configuration that does not even parse
        return "?"


def main() -> int:
    """A long-lived worker: one run configuration per stdin line, one result per stdout
    line (torch is imported and the process warmed up once, not once per run). SIGTERM or
    SIGINT finishes the current client of the current run, then the worker exits."""
    from ..training.stops import StopFlag

    store, threads = sys.argv[1], int(sys.argv[2])
    stop = StopFlag(float(sys.argv[3]) if len(sys.argv) > 3 else None)  # --time-limit's time.time()

    def handler(signum, frame):  # finish the current client, keep every complete round
        stop.request(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    from ..signals import die_with_parent

    die_with_parent()  # the sweep killed outright (SIGKILL): stop too, never train on alone
    for line in sys.stdin:
        if not line.strip():
            continue
        unit = json.loads(line)
        try:
            result = run_unit(unit, store, threads, log=lambda m: print(m, file=sys.stderr, flush=True), stop=stop)
        except Exception as e:  # noqa: BLE001 -- reported as the runs' one-line error
            import traceback

            traceback.print_exc(file=sys.stderr)  # the worker's log keeps where it came from
            result = [{"run": unit_name(c), "status": "failed", "error": f"internal error: {type(e).__name__}: {e}"}
                      for c in unit]
        print(json.dumps(result), flush=True)
        if stop.is_set():
            return 130
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
