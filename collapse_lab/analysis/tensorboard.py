"""A run's metrics as TensorBoard event files (``collapse-lab export tensorboard``, and
``train --log tensorboard DIR`` as each round ends): per round the global model's numbers,
each client's local loss per epoch, the probe's spectrum summaries (n above tau among the
logged top 100, and the measures of ``spectra.measures.PROBED``) with the logged spectrum as
a histogram of its log10 singular values, and under ``--probe-layers`` each layer's measures
and the layer x round heatmap as an image (``analysis.run_log``: the tags). One sub-folder
per run, named as the run. Needs the ``tensorboard`` package (the extra)."""
from __future__ import annotations

from pathlib import Path

from ..errors import CollapseLabError
from ..files import missing_folders, remove_empty
from ..spectra.functional import DEFAULT_TAU
from ..store import RunDir
from .run_log import HEATMAP, RoundFeed, points, round_heatmap


def _writer(logdir: Path):
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        raise CollapseLabError("TensorBoard logging needs the tensorboard package: pip install 'collapse-lab[tensorboard]'") from None
    _quiet_writer_threads()
    return SummaryWriter(log_dir=str(logdir), flush_secs=3600)


def _quiet_writer_threads() -> None:
    """TensorBoard writes from a thread; when a write fails (a full disk) the thread prints its
    traceback and the error comes back in the writing thread, where ``Board`` answers it. So
    the writer thread's own traceback is not printed (other threads' are, as before)."""
    import threading

    from tensorboard.summary.writer.event_file_writer import _AsyncWriterThread

    hook = threading.excepthook
    if getattr(hook, "collapse_lab", False):
        return

    def quiet(args):
        if not isinstance(args.thread, _AsyncWriterThread):
            hook(args)

    quiet.collapse_lab = True
    threading.excepthook = quiet


def tag_values(run: RunDir, tau: float = DEFAULT_TAU) -> dict[str, list[tuple[int, float]]]:
    """The scalars a run's export holds: tag -> [(step, value)] (``run_log.points``: the step
    is the round; local epochs counted over the run under ``loss_by_epoch``), from metrics.jsonl."""
    out: dict[str, list[tuple[int, float]]] = {}
    epochs = int(run.meta.get("local_epochs") or 1)
    for e in run.metrics():
        for tag, step, v in points(e, tau, epochs):
            out.setdefault(tag, []).append((step, v))
    return out


class Board:
    """One run's event files under ``logdir/<run>``, written round by round (``update`` after
    each round; the first call writes every round stored so far). Event files an earlier
    start left there are replaced, so a resumed run's folder holds each round once."""

    def __init__(self, logdir: Path, run_name: str, tau: float = DEFAULT_TAU, memo: dict | None = None):
        self.folder, self.tau, self.name, self.feed = Path(logdir) / run_name, tau, run_name, RoundFeed()
        self.memo = {} if memo is None else memo  # the run's heatmap, shared with its other live logs
        self.created = missing_folders(self.folder)
        for old in self.folder.glob("events.out.tfevents.*"):
            old.unlink()
        try:
            self.w = _writer(self.folder)
        except CollapseLabError:
            raise
        except Exception as e:
            self.w = None
            raise self._failed(e) from e

    def _failed(self, e: BaseException) -> BaseException:
        """A write that failed: the writer closed quietly, this log's event files and the
        folders it created removed; the error to raise (a full disk names the folder)."""
        try:
            if self.w is not None:
                self.w.close()
        except Exception:  # noqa: BLE001 -- the first failure is the one reported
            pass
        for f in self.folder.glob("events.out.tfevents.*"):
            f.unlink(missing_ok=True)
        remove_empty(self.created)
        from .plots import disk_full

        return disk_full(e, self.folder) or e

    def update(self, run: RunDir) -> None:
        try:
            self._update(run)
        except Exception as e:
            raise self._failed(e) from e

    def _update(self, run: RunDir) -> None:
        import numpy as np

        fresh = self.feed.new(run)
        for e in fresh:
            for tag, step, v in points(e, self.tau, int(run.meta.get("local_epochs") or 1)):
                self.w.add_scalar(tag, v, step)
            if e.get("event") == "probe" and e.get("probe_sv"):
                sv = np.asarray(e["probe_sv"], dtype=np.float64)
                self.w.add_histogram("spectrum/log10_singular_values",
                                     np.log10(np.maximum(sv, e.get("probe_floor") or 1e-300)), e["round"])
        if any(e.get("event") == "probe_layers" for e in fresh):  # the heatmap of every round so far
            self.w.add_image(f"layers/{HEATMAP}", round_heatmap(self.name, self.feed, self.memo), self.feed.done,
                             dataformats="HWC")
        self.w.flush()

    def close(self) -> None:
        try:
            self.w.close()
        except Exception as e:
            raise self._failed(e) from e


def export(run: RunDir, logdir: Path, tau: float = DEFAULT_TAU) -> Path:
    """Write one run's event files under ``logdir/<run>``; returns that folder."""
    board = Board(logdir, run.path.name, tau)
    try:
        board.update(run)
    finally:
        board.close()
    return board.folder
