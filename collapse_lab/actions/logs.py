"""``train --log KIND DIR``: a run's metrics written as each round is stored, to TensorBoard
event files or an offline W&B run (``analysis.tensorboard``, ``analysis.wandb_log``)."""
from __future__ import annotations

from pathlib import Path

from ..errors import CollapseLabError

LOG_KINDS = ("tensorboard", "wandb")


def check_log(kind: str, folder: str) -> None:
    """``--log KIND DIR``: the kind, its package and the folder, checked before anything trains."""
    from ..store.paths import check_store_for_writing

    if kind not in LOG_KINDS:
        raise CollapseLabError(f"--log {kind!r}: the kinds are tensorboard and wandb (--log tensorboard DIR)")
    try:
        __import__("tensorboard" if kind == "tensorboard" else "wandb")  # checked before anything trains
    except ImportError:
        raise CollapseLabError(f"--log {kind} needs the {kind} package: pip install 'collapse-lab[{kind}]'") from None
    check_store_for_writing(folder, f"--log {kind} DIR")  # a file or read-only folder: one line, before training
    if kind == "wandb":
        _check_wandb_mode()


def _check_wandb_mode() -> None:
    """An online W&B log needs an API key: without one W&B fails after the first round is
    stored, so it is refused here, before anything trains (offline, the default, needs none)."""
    import netrc
    import os

    mode = os.environ.get("WANDB_MODE", "offline")
    if mode in ("offline", "disabled", "dryrun"):
        return
    try:
        has_netrc = netrc.netrc().authenticators("api.wandb.ai") is not None
    except (OSError, netrc.NetrcParseError):
        has_netrc = False
    if not os.environ.get("WANDB_API_KEY") and not has_netrc:
        raise CollapseLabError(f"--log wandb: WANDB_MODE={mode} needs an API key and none is configured; run `wandb "
                               "login` (or set WANDB_API_KEY), or leave WANDB_MODE unset to log offline and `wandb sync` later")


def where_logs_went(kind: str, folder: str) -> str:
    """The line ``train --log`` ends with: where the logs are and the command that shows them."""
    if kind == "tensorboard":
        return f"logs: TensorBoard event files in {folder}/<run>; view them with: tensorboard --logdir {folder}"
    import os

    if os.environ.get("WANDB_MODE", "offline") in ("offline", "dryrun"):
        return (f"logs: W&B offline runs in {folder}/wandb/offline-run-*; upload them with: "
                f"wandb sync {folder}/wandb/offline-run-*")
    return f"logs: W&B runs in project collapse-lab (local files in {folder}/wandb)"


def live_log(kind: str, folder: Path, run_path: Path, memo: dict):
    """A run's live log of ``kind`` under ``folder``: ``update(run)`` after each round, ``close()``;
    ``memo``: shared by the run's live logs (its heatmap is drawn once a round)."""
    from ..store import RunDir

    if kind == "tensorboard":
        from ..analysis.tensorboard import Board

        return Board(Path(folder), run_path.name, memo=memo)
    from ..analysis.wandb_log import WandbLog

    return WandbLog(Path(folder), RunDir(run_path), memo=memo)
