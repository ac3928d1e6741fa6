"""Train federated runs into the run store (``collapse-lab train``; ``collapse_lab.train``):
the options resolved into runs (``runspec.resolve``), every run prepared, checked and locked
before any trains (``sweep.service.begin``), then trained one after another here or at once
on the local pool, each with per-round global and client checkpoints (FedDecorr Sec. 5.1)."""
from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..errors import CollapseLabError
from ..timelimit import TIME_LIMIT, continue_command
from .selection import say_stderr
from .train_report import TrainReport



@dataclass
class TrainResult:
    """What ``train`` did: one summary per run (trained, diverged or ``skipped (complete)``),
    the runs that diverged, how many trained here, the seconds, and ``stopped`` when Ctrl-C,
    SIGTERM or the time limit stopped it ({"run", "round", "client", "reason", "left"}; the
    run and round are None when the pool stopped)."""
    runs: list[dict]
    diverged: list[str]
    trained: int
    seconds: float
    paths: list[Path] = field(default_factory=list)
    stopped: dict | None = None

    def lines(self) -> list[str]:
        """Each run's final accuracy (or status), then how many trained and which diverged."""
        out = [f"{s['run']}: " + (f"test acc {s['final_test_acc']:.4f}" if "final_test_acc" in s else s["status"])
               for s in self.runs]
        return out + [f"{self.trained - len(self.diverged)} run(s) trained in {self.seconds:.1f} s"
                      + (f"; {len(self.diverged)} diverged: {', '.join(self.diverged)}" if self.diverged else "")]

    def as_json(self) -> dict:
        """The summaries and seconds; where it stopped and the command that continues."""
        out: dict = {"runs": self.runs}
        if self.stopped is not None:
            st = self.stopped
            out["stopped"] = {"run": str(st["run"]), "round": st["round"], "reason": st["reason"],
                              "continue": continue_command(resume=True)}
        return {**out, "seconds": round(self.seconds, 2)}

    def stopped_line(self) -> str:
        """Ctrl-C, SIGTERM or the time limit stopped the runs: where, and the command that continues."""
        st, cmd = self.stopped, continue_command(resume=True)
        if st["run"] is None:  # the pool: the runs under way stopped at their last complete round
            return f"{st['reason']}: the runs under way stopped at their last complete round. Continue with: {cmd}"
        where = f"after client {st['client']}" if st["client"] is not None else "before storing any client"
        if st["reason"] == TIME_LIMIT and st["client"] is None:
            where = "before it started (the next round would not end in time)"
        left = st["left"]
        return (f"{st['reason']}: stopped {st['run'].name} in round {st['round']} {where}; rounds up to "
                f"{st['round'] - 1} are stored" + (f"; {left} more run(s) to train" if left else "")
                + f". Continue with: {cmd}")


def train(store: str | Path = "checkpoints", *, flags: dict | None = None, options: dict | None = None,
          config_file: str | None = None, overwrite: bool = False, resume: bool = False, workers: int | None = None,
          time_limit: str | None = None, log_to=(), say: Callable[[str], None] = say_stderr, bar=None,
          log: Callable[[str], None] | None = None, stop=None, on_diverged: str = "continue") -> TrainResult:
    """Train the runs the options ask for into ``store``.

    ``flags``: the options as the command names them (only those given; ``alpha``/``seed``
    lists, ``method_option`` KEY=VALUE lists); ``options``: as a config file names them
    (``alphas``, ``seeds``, ``method_options``); ``config_file`` sits below the flags. Complete
    runs are skipped, unfinished ones continued with ``resume``, replaced with ``overwrite``.
    ``workers`` > 1 trains on the local pool; ``log_to``: ``(kind, folder)`` live logs.
    ``bar(total_steps)``: a progress bar (a context manager with ``update``); ``log``: one
    line a round; ``stop``: a ``training.stops.StopFlag`` (the command's signal handlers set
    it; default: one that stops at ``time_limit``). ``on_diverged``: ``continue`` (the other
    runs go on) or ``raise`` (``training.stops.Diverged``)."""
    flags = dict(flags or {})
    _check(resume, overwrite, on_diverged, workers, log_to)
    prepared = _prepare(store, flags, options, config_file, overwrite, resume, time_limit, say)
    skipped = [p for p in prepared if p.action == "skip"]
    t0 = time.time()
    report = TrainReport(log_to, say, raise_diverged=on_diverged == "raise")
    todo = [p for p in prepared if p.action in ("train", "resume")]
    if (workers or 1) > 1 and todo:
        stopped = _on_pool(prepared, Path(store), workers, time_limit, report, say)
    else:
        stopped = _here(prepared, report, bar, log, stop, time_limit)
    from ..config import alpha_str

    for p in skipped:
        report.summaries.append({"run": str(p.path), "status": "skipped (complete)",
                                 "alpha": alpha_str(p.config.alpha), "seed": p.config.seed})
    return TrainResult(report.summaries, report.diverged, len(todo), time.time() - t0,
                       [p.path for p in prepared], stopped)


def _check(resume: bool, overwrite: bool, on_diverged: str, workers, log_to) -> None:
    """The options that contradict each other, the pool's limits and the live logs' folders."""
    if resume and overwrite:
        raise CollapseLabError("--resume and --overwrite contradict each other; choose one")
    if on_diverged not in ("continue", "raise"):
        raise CollapseLabError(f"on_diverged={on_diverged!r}: choose continue or raise")
    check_pool(workers, log_to)
    from .logs import check_log

    for kind, folder in log_to:
        check_log(kind, folder)


def _prepare(store, flags, options, config_file, overwrite, resume, time_limit, say) -> list:
    """The runs resolved, prepared, checked and locked (``sweep.service.begin``: store, names,
    data, time limit, disk, one writer per run), all refused here, before any trains; then
    the first line (the runs' precision), the notes, and the runs already complete."""
    from ..plan.estimate import check_time_limit
    from ..runspec.expand import precision_line
    from ..sweep import service

    auto = _precision_open(flags, options, config_file)
    configs, adopted = _configs(flags, options, config_file, store, auto)
    prepared = service.begin(configs, store, "--store", overwrite, resume, lambda cs: check_time_limit(time_limit, cs))
    say(f"train: {len(configs)} run(s), precision {precision_line(configs, auto=auto)}")
    for note in dict.fromkeys([*adopted, *(n for p in prepared for n in p.notes)]):  # each note once
        say(f"note: {note}")
    for p in prepared:
        if p.action == "skip":
            say(f"{p.path}: already complete with this configuration (--overwrite to retrain)")
    return prepared


def check_pool(workers: int | None, log_to) -> None:
    """What the pool cannot do, refused before anything is prepared."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise CollapseLabError(f"--workers {workers}: give 1 or more training processes")
    if workers and workers > 1 and log_to:
        raise CollapseLabError("--log writes each round from the process that trains it; with --workers > 1 use "
                               "collapse-lab export tensorboard after the runs, or --workers 1")


def _precision_open(flags: dict, options: dict | None, config_file: str | None) -> bool:
    """Whether the runs' precision is left to ``auto`` (neither the options nor the config
    file chose fp32 or bf16)."""
    from ..config import load_config_file

    chosen = flags.get("precision") or (options or {}).get("precision")
    if chosen is None and config_file:
        chosen = load_config_file(config_file).get("precision")
    return chosen in (None, "auto")


def _configs(flags: dict, options: dict | None, config_file, store, auto: bool) -> tuple[list, list[str]]:
    """The runs of the options (the one resolver) and the notes of stored runs adopted in the
    other precision (a stored run keeps the precision it trained in when none was chosen)."""
    from ..runspec.resolve import resolve_runs

    if options is not None and config_file:
        raise CollapseLabError("give the options either in a config file or as options, not both")
    configs = resolve_runs(flags, config_file, values=options, where="the options" if options is not None else None)
    if not auto:
        return configs, []
    from ..store.naming import in_stored_precision

    found = [in_stored_precision(Path(store), c) for c in configs]
    return [c for c, _ in found], [note for _, note in found if note]


def _here(prepared, report: TrainReport, bar, log, stop, time_limit) -> dict | None:
    """The prepared runs trained one after another in this process; None, or what stopped them."""
    from ..sweep import service
    from ..timelimit import deadline
    from ..training.prepare import total_steps
    from ..training.stops import Interrupted, StopFlag

    todo = [p for p in prepared if p.action in ("train", "resume")]
    stop = stop if stop is not None else StopFlag(deadline(time_limit))
    try:
        with (bar(sum(total_steps(p) for p in todo)) if bar is not None else nullcontext()) as report.bar:
            on_step = (lambda: report.bar.update(1)) if report.bar is not None else None
            service.train_here(prepared, on_step=on_step, log=log, stop=stop, report=report)
    except Interrupted as e:
        return {"run": e.path, "round": e.round, "client": e.client, "reason": e.signame,
                "left": len(todo) - len(report.summaries) - 1}
    finally:
        report.close()  # an interrupted run's live logs keep what was stored
    return None


def _on_pool(prepared, store: Path, workers: int, time_limit, report: TrainReport, say) -> dict | None:
    """``workers`` > 1: the runs trained at once on the local pool (``sweep.service.execute``),
    each run the same bytes as alone; a line as each run ends; None, or what stopped them."""
    import shutil

    from ..store import RunDir, lock
    from ..store.paths import sweep_logs
    from ..sweep import service
    from ..signals import SweepInterrupted

    todo = [p for p in prepared if p.action in ("train", "resume")]
    for p in todo:
        if p.action == "train" and p.path.exists():  # --overwrite: what it replaces was said; the pool starts afresh
            shutil.rmtree(p.path)
        lock.release(p.path)  # the workers take each run's lock as they start it
    say(f"train: {len(todo)} run(s) on {min(workers, len(todo))} worker processes (logs in {sweep_logs(store)})")
    t0 = time.time()

    def ended(ev: dict) -> None:
        if ev["event"] == "end":
            say(f"{ev['run']}: {ev['status']} ({time.time() - t0:.0f} s)")

    try:
        results = {r["run"]: r for r in service.execute([[p.config] for p in todo], store, "local", workers, ended,
                                                        time_limit)}
    except SweepInterrupted as e:
        return {"run": None, "round": None, "client": None, "reason": e.signame, "left": None}
    for p in todo:
        res, run = results.get(p.path.name, {"status": "not started"}), RunDir(p.path)
        status = run.meta.get("status") if run.exists() else res["status"]
        acc = [e["test_acc"] for e in run.metrics() if e.get("event") == "round"] if run.exists() else []
        report.summaries.append({"run": str(p.path), "status": status, **({"final_test_acc": acc[-1]} if acc else {}),
                                 **({"error": res["error"]} if res.get("error") else {})})
        if status == "diverged":
            report.diverged.append(p.path.name)
    failed = [s for s in report.summaries if s["status"] not in ("complete", "diverged")]
    if failed:
        raise CollapseLabError(f"{len(failed)} run(s) did not finish ({failed[0]['run']}: "
                               f"{failed[0].get('error') or failed[0]['status']}); the same command with --resume "
                               "continues them")
    return None
