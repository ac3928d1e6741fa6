"""``collapse-lab export tensorboard``: a store's runs as TensorBoard event files."""
from __future__ import annotations

import json
from pathlib import Path

import click

from .options import json_option, store_option
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


@click.command("export")
@click.argument("kind", type=click.Choice(["tensorboard"]))
@store_option()
@click.option("--out", required=True, type=click.Path(file_okay=False), help="TensorBoard log folder (one sub-folder per run).")
@json_option
def export_cmd(kind, store, out, as_json):
    """Round metrics, per-client local losses and the probe's spectrum summaries of every
    run in --store, readable by `tensorboard --logdir OUT`."""
    from ..store import find_runs
    from ..store.paths import check_store_for_reading, check_store_for_writing

    runs = find_runs(check_store_for_reading(store))
    if not runs:
        raise CollapseLabError(f"no runs in {store}; train some first (collapse-lab train --store {store})")
    from ..files import missing_folders, remove_empty

    created = missing_folders(Path(out))
    check_store_for_writing(out, "--out")  # a read-only or file target: one line, exit 2, before anything is written
    from ..analysis.tensorboard import export

    try:
        folders = [str(export(r, Path(out))) for r in runs]
    except BaseException:
        remove_empty(created)  # no empty --out left (each run's log removes its own files)
        raise
    click.echo(json.dumps({"folders": folders}, indent=1) if as_json else
               f"{len(folders)} run(s) written to {out}; view with: tensorboard --logdir {out}")
