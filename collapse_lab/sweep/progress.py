"""Progress by run and round while other processes train (the local pool, Ray, SLURM on a
shared store): a tqdm bar over every round of the runs in flight, with tqdm's rate and ETA,
fed by polling each run's ``rounds_complete`` in the store (the workers' own logs stay where
they are). On a terminal only: tqdm's ``disable=None`` keeps it out of logs and pipes, where
the per-run lines (``k/N runs trained``) remain the record."""
from __future__ import annotations

import sys
import threading
from pathlib import Path

from ..errors import CollapseLabError


class RoundProgress:
    """``with RoundProgress(store, configs, desc):`` a bar of the configs' rounds, polled every
    ``every`` seconds from the store; ``clock``: the waiting function (tests inject one)."""

    def __init__(self, store: Path, configs, desc: str = "train", every: float = 1.0, file=None, disable=None):
        self.store, self.configs, self.desc, self.every = Path(store), list(configs), desc, every
        self.file, self.disable = file or sys.stderr, disable
        self._stop = threading.Event()
        self.bar = None

    def done_rounds(self) -> tuple[int, int]:
        """(rounds stored, runs complete) over the configs, read from the store now."""
        from ..store import RunDir, run_path

        rounds = runs = 0
        for c in self.configs:
            try:
                meta = RunDir(run_path(self.store, c)).meta
            except (CollapseLabError, OSError, ValueError):  # not created yet: 0 rounds (display only)
                continue
            r = min(int(meta.get("rounds_complete", 0)), c.rounds)
            rounds += r
            runs += r >= c.rounds
        return rounds, runs

    def _poll(self) -> None:
        while not self._stop.wait(self.every):
            self.update()

    def update(self) -> None:
        rounds, runs = self.done_rounds()
        self.bar.n = rounds
        self.bar.set_postfix_str(f"{runs}/{len(self.configs)} runs", refresh=False)
        self.bar.refresh()

    def __enter__(self):
        from tqdm import tqdm

        self.bar = tqdm(total=sum(c.rounds for c in self.configs), unit="round", desc=self.desc, file=self.file,
                        dynamic_ncols=True, disable=self.disable, mininterval=0.5)
        self.bar.n = self.bar.last_print_n = self.done_rounds()[0]  # resumed rounds are not this command's rate
        if not self.bar.disable:
            self._thread = threading.Thread(target=self._poll, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if not self.bar.disable:
            self._thread.join()
            self.update()
        self.bar.close()
