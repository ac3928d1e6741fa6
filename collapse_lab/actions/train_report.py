"""What ``train`` says as its runs end (one at a time in this process): each run's summary,
each divergence with the option to lower, and the live logs of ``--log``."""
from __future__ import annotations

from pathlib import Path

from ..config import alpha_str


class TrainReport:
    """What train says as its runs end: their summaries, each divergence with its hint, and
    the live logs of --log, written as each round is stored."""

    def __init__(self, log_to, say, raise_diverged: bool = False):
        self.log_to, self.say, self.raise_diverged = log_to, say, raise_diverged
        self.summaries, self.diverged, self.bar = [], [], None
        self.logs: dict = {}  # (kind, run path) -> its live log (commands.export.live_log)
        self.memos: dict = {}  # run path -> what its live logs share (the round's heatmap)

    def __call__(self, ev: dict) -> None:
        p = ev["prepared"]
        if ev["event"] == "start":
            if hasattr(self.bar, "set_postfix_str"):
                self.bar.set_postfix_str(p.path.name)
            return
        if ev["event"] == "round":
            self._logs(p.path, close=False)
            return
        info = {"alpha": alpha_str(p.config.alpha), "seed": p.config.seed, "resumed_from": p.start}
        self.summaries.append({**ev["summary"], **info})
        self._logs(p.path, close=True)
        if ev["event"] == "end":
            return
        e, cfg = ev["error"], p.config  # diverged: the other runs go on; the command exits 1 at the end
        hint = f"lower --lr (now {cfg.lr:g})" + (f" or --beta (now {cfg.beta:g})" if cfg.reg != "none" else "")
        if e.client is None and "server_lr" in cfg.method_options:  # a server step diverged
            hint = f"lower --server-lr (now {cfg.method_options['server_lr']:g}) or --lr (now {cfg.lr:g})"
        self.say(f"diverged: {e}; rounds up to {e.round - 1} are stored; {hint}")
        self.diverged.append(p.path.name)
        if self.raise_diverged:
            raise e

    def _logs(self, path: Path, close: bool) -> None:
        """Every round stored since the last call into each live log of the run; at its end, closed."""
        from .logs import live_log
        from ..store import RunDir

        memo = self.memos.setdefault(path, {})
        for kind, folder in self.log_to:
            log = self.logs.get((kind, path)) or self.logs.setdefault((kind, path), live_log(kind, folder, path, memo))
            log.update(RunDir(path))
            if close:
                log.close()
                del self.logs[(kind, path)]
        if close:
            self.memos.pop(path, None)

    def close(self) -> None:
        """An interrupted run's logs: what was stored is written."""
        for log in self.logs.values():
            log.close()
        self.logs.clear()
