"""What a sweep says while and after it trains: one line per finished run with the counts
and the ETA from the runs' wall times, and the outcome with the exit status it means."""
from __future__ import annotations

from typing import Callable

from ..timelimit import EXIT_TIME_LIMIT

ENDED_WELL = ("complete", "skipped", "time-limit", "interrupted")  # not a failure


def duration_text(seconds: float | None) -> str:
    """1h02m, 3m05s; ``unknown`` for None."""
    if seconds is None:
        return "unknown"
    m, s = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s"


class Progress:
    """One line (through ``say``) per finished run: its outcome, the counts and the ETA."""

    def __init__(self, total: int, lanes: int, say: Callable[[str], None]):
        self.total, self.lanes, self.say = total, lanes, say
        self.done = self.running = self.failed = 0
        self.walls: list[float] = []

    def __call__(self, ev: dict) -> None:
        if ev["event"] == "start":
            self.running += 1
            return
        self.running -= not ev.get("not_started")
        self.done += 1
        self.failed += ev["status"] not in ENDED_WELL
        if ev["status"] == "complete":
            self.walls.append(ev["wall_seconds"])
        left = self.total - self.done - self.running
        mean = sum(self.walls) / len(self.walls) if self.walls else None
        eta_now = mean * (left + self.running) / self.lanes if mean else None
        what = f"test acc {ev['final_test_acc']:.4f}" if "final_test_acc" in ev else ev["status"]
        self.say(f"sweep: {ev['run']} {what} ({ev['wall_seconds']:.1f} s); {self.done} done, {self.running} "
                 f"running, {self.failed} failed, {left} remaining; ETA {duration_text(eta_now)}")


def outcome(results: list[dict], total: int, todo: int, seconds: float, resume: str) -> tuple[list[str], int]:
    """The outcome lines (the counts, each run stopped or failed, how to continue) and the exit
    status: 0, 1 (failed or interrupted), 75 (``--time-limit``)."""
    late = [r for r in results if r["status"] == "time-limit"]
    stopped = [r for r in results if r["status"] == "interrupted"]  # a signal to a worker: every round kept
    failed = [r for r in results if r["status"] not in ENDED_WELL]
    lines = [f"sweep: {len(results) - len(failed) - len(late) - len(stopped)} of {total} run(s) trained now, "
             f"{total - todo} already complete, {len(failed)} failed"
             + (f", {len(stopped)} interrupted" if stopped else "")
             + (f", {len(late)} stopped by --time-limit" if late else "") + f", in {seconds:.1f} s"]
    lines += [f"  interrupted: {r['run']}: {r.get('error', r['status'])}" for r in stopped]
    lines += [f"  failed: {r['run']}: {r.get('error', r['status'])}" for r in failed]
    if stopped and not failed and not late:
        return lines + [f"  every complete round is kept; continue the sweep with: {resume}"], 1
    if late:
        return lines + [f"sweep: time limit: {len(late)} run(s) stopped after their last round that fit or not "
                        f"started; every complete round is kept; continue with: {resume}"], EXIT_TIME_LIMIT
    if failed:
        return lines + [f"  continue the sweep with: {resume}"], 1
    return lines, 0
