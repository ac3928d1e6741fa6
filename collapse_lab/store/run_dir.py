"""A run directory (the format is documented in docs/store-format.md):

    <out>/<run>/run.json                  resolved config, status, partition hash, versions
    <out>/<run>/partition.safetensors     per-client indices + clients x classes counts
    <out>/<run>/metrics.jsonl             one JSON object per event
    <out>/<run>/round_<r>/global.safetensors       global model after aggregation (r = 0: init)
    <out>/<run>/round_<r>/client_<k>.safetensors   client k after its local training in round r
    <out>/<run>/round_<r>/method.safetensors       what the method carries across rounds on the
                                                   server (SCAFFOLD's c, FedAvgM's velocity, FedETF's
                                                   memory vectors), after round r
    <out>/<run>/round_<r>/method_clients.safetensors   the same per client, keys "<k>/<name>"
                                                   (SCAFFOLD's c_k, MOON's previous models, FedBN's
                                                   BatchNorm); pruned with the client checkpoints,
                                                   except for the latest round
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Callable

import torch

from ..errors import CollapseLabError
from ..faults import no_fault
from ..files import append_jsonl, read_jsonl, write_json
from ..tensor_files import load_tensors, save_tensors
from ..partition import Partition
from .retention import keeps_global, parse_keep_global, parse_keep_local  # noqa: F401  (the store's API)
from . import layout, retention
from .format import FORMAT_VERSION, NewerFormatError, check_format, package_versions  # noqa: F401  (the store's API)


class RunDir:
    def __init__(self, path: Path, writer=None, fault: Callable[[str], None] = no_fault):
        """``writer``: an ``io.AsyncWriter`` (checkpoint writes then go to its thread);
        ``fault``: the fault point of every atomic write (``faults.Faults.point``)."""
        self.path = Path(path)
        self.writer, self.fault = writer, fault

    def _save(self, path: Path, state: dict, metadata: dict) -> None:
        if self.writer is None:
            save_tensors(path, state, metadata=metadata, fault=self.fault)
        else:
            self.writer.submit(lambda: save_tensors(path, state, metadata=metadata, fault=self.fault))

    def flush(self) -> None:
        """Wait until every submitted checkpoint is on disk (before a round counts as complete)."""
        if self.writer is not None:
            self.writer.flush()

    # -- reading -----------------------------------------------------------------
    @property
    def meta(self) -> dict:
        p = self.path / "run.json"
        try:
            with open(p) as f:
                meta = json.load(f)
        except (OSError, ValueError) as e:
            raise CollapseLabError(f"{p} is unreadable ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}); "
                                   "move the run folder away or retrain it") from None
        if not isinstance(meta, dict):
            raise CollapseLabError(f"{p} does not hold a JSON object; move the run folder away or retrain it")
        for key in ("rounds_complete", "rounds"):  # the bookkeeping every reader relies on
            v = meta.get(key, 0)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise CollapseLabError(f"{p}: {key} {v!r} is not a whole number >= 0; the file was edited or damaged: "
                                       "move the run folder away or retrain it")
        check_format(meta, p)
        if not isinstance(meta.get("status", "running"), str):
            raise CollapseLabError(f"{p}: status {meta.get('status')!r} is not text; move the run folder away or retrain it")
        return meta

    @property
    def status(self) -> str:
        """The run's status as it is now: run.json's, except that a run marked ``running``
        that no live process holds (its writer was killed or stopped) is ``interrupted``
        (with ``rounds_complete`` rounds kept). "running" only while a writer holds its lock."""
        s = str(self.meta.get("status", "running"))
        if s == "running":
            from . import lock

            if lock.held_elsewhere(self.path) is None and not lock.held_here(self.path):
                return "interrupted"
        return s

    @property
    def config(self):
        from ..config import RunConfig

        try:
            return RunConfig.from_json(self.meta)
        except (TypeError, KeyError, ValueError) as e:
            raise CollapseLabError(f"{self.path / 'run.json'} does not describe a run ({type(e).__name__}: {e}); "
                                   "move the run folder away or retrain it") from None

    def round_dir(self, r: int) -> Path:
        return layout.round_dir(self.path, r)

    def global_path(self, r: int) -> Path:
        return layout.global_path(self.path, r)

    def client_path(self, r: int, k: int) -> Path:
        return layout.client_path(self.path, r, k)

    def load_global(self, r: int) -> dict[str, torch.Tensor]:
        return load_tensors(self.global_path(r))

    def load_client(self, r: int, k: int) -> dict[str, torch.Tensor]:
        return load_tensors(self.client_path(r, k))

    @property
    def partition_path(self) -> Path:
        return self.path / "partition.safetensors"

    def partition(self) -> Partition:
        return Partition.load(self.partition_path)

    def metrics(self, warn: Callable[[str], None] | None = None) -> list[dict]:
        """The run's events; unreadable lines are skipped with one warning (``files.read_jsonl``)."""
        return read_jsonl(self.path / "metrics.jsonl", warn)

    # -- what a run holds: readers ask these, never for a path ------------------------
    def exists(self) -> bool:
        """Whether the folder is a run (it has its run.json)."""
        return (self.path / "run.json").is_file()

    def record_sha256(self) -> str:
        """The content hash of run.json (OSError where it cannot be read): what a writer
        compares to see that nobody changed the run meanwhile."""
        import hashlib

        return hashlib.sha256((self.path / "run.json").read_bytes()).hexdigest()

    def is_complete(self, rounds: int = 0) -> bool:
        """A finished run holding at least ``rounds`` complete rounds."""
        if not self.exists():
            return False
        meta = self.meta
        return meta.get("status") == "complete" and int(meta.get("rounds_complete", 0)) >= rounds

    def has_global(self, r: int) -> bool:
        return self.global_path(r).is_file()

    def has_client(self, r: int, k: int) -> bool:
        return self.client_path(r, k).is_file()

    def clients_at(self, r: int) -> list[int]:
        """The clients whose local model of round ``r`` is stored."""
        return sorted(int(q.stem.split("_")[1]) for q in self.round_dir(r).glob("client_*.safetensors"))

    def checkpoint_name(self, r: int, client: int | None = None) -> str:
        """The checkpoint's place in the run, for messages ("round_3/global.safetensors")."""
        p = self.global_path(r) if client is None else self.client_path(r, client)
        return p.relative_to(self.path).as_posix()

    def size_bytes(self) -> int:
        """The bytes the run's files take (its checkpoints, records and logs)."""
        return sum(f.stat().st_size for f in self.path.rglob("*") if f.is_file())

    def checkpoint_stamp(self, r: int, client: int | None = None) -> tuple | None:
        """(inode, size, mtime) of a checkpoint, None where it is not there: whether a file a
        reader read earlier was rewritten since (a run retrained), without reading it."""
        try:
            st = (self.global_path(r) if client is None else self.client_path(r, client)).stat()
        except OSError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns

    def checkpoint_sha256(self, r: int, client: int | None = None) -> str:
        """The content hash of a checkpoint (the features cache's key)."""
        import hashlib

        h = hashlib.sha256()
        with open(self.global_path(r) if client is None else self.client_path(r, client), "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()

    def load_state(self, r: int, client: int | None, model: torch.nn.Module,
                   extra_ok: bool = False) -> dict[str, torch.Tensor]:
        """A checkpoint's tensors checked against ``model``'s names and shapes
        (``tensor_files.load_state``; ``extra_ok``: only the model's own tensors)."""
        from ..tensor_files import load_state

        return load_state(self.global_path(r) if client is None else self.client_path(r, client), model, extra_ok)

    def features_cache(self):
        """The store's cache of representations (shared by the runs of one store):
        ``store.features_cache.FeaturesCache``."""
        from .features_cache import FeaturesCache

        return FeaturesCache(self.path.parent)

    # -- writing -----------------------------------------------------------------
    @staticmethod
    def create(out: Path, name: str, config_json: dict, partition: Partition | None,
               init_state: dict[str, torch.Tensor] | None, extra: dict, writer=None,
               fault: Callable[[str], None] = no_fault) -> "RunDir":
        """The run folder created whole (``store.lifecycle.create``): run.json, partition and
        round_0 written, then renamed into place."""
        from .lifecycle import create

        return RunDir(create(out, name, config_json, partition, init_state, extra, fault), writer, fault)

    def update(self, **fields) -> None:
        meta = self.meta
        meta.update(fields)
        write_json(self.path / "run.json", meta, self.fault)

    def log(self, *events: dict) -> None:
        append_jsonl(self.path / "metrics.jsonl", *events)

    def save_global(self, r: int, state) -> None:
        self._save(self.global_path(r), state, {"round": str(r), "model": "global"})

    def save_client(self, r: int, k: int, state) -> None:
        self._save(self.client_path(r, k), state, {"round": str(r), "model": f"client_{k}"})

    def method_path(self, r: int, clients: bool = False) -> Path:
        return self.round_dir(r) / ("method_clients.safetensors" if clients else "method.safetensors")

    def save_method_state(self, r: int, server: dict, clients: dict | None = None) -> None:
        if server:
            self._save(self.method_path(r), server, {"round": str(r), "model": "method"})
        if clients:
            self._save(self.method_path(r, True), clients, {"round": str(r), "model": "method_clients"})

    def load_method_state(self, r: int) -> tuple[dict, dict]:
        """(server, per-client) method state after round r; empty where the method keeps none."""
        out = []
        for clients in (False, True):
            p = self.method_path(r, clients)
            out.append(load_tensors(p) if p.is_file() else {})
        return out[0], out[1]

    def discard_after(self, r: int) -> None:
        """Before a resume from round r: later rounds, temporary files and events removed
        (``store.lifecycle.discard_after``)."""
        from .lifecycle import discard_after

        discard_after(self, r)

    def drop_checkpoints(self, why: str) -> None:
        """Remove every round's checkpoints of a finished run, keeping run.json, the
        partition and the metrics (``tables --smoke``: a table reads accuracies, and a
        thousand paper runs' checkpoints would fill a disk); run.json says so, and a later
        ``--resume`` would find the run damaged and train it again."""
        self.update(checkpoints_dropped=why)
        for d in sorted(self.path.glob("round_*")):
            if d.is_dir():
                shutil.rmtree(d)

    def rounds_on_disk(self) -> list[int]:
        """The rounds that have a folder, in order."""
        out = []
        for d in self.path.glob("round_*"):
            head, _, q = d.name.partition("_")
            if q.isascii() and q.isdigit() and d.is_dir():
                out.append(int(q))
        return sorted(out)

    def pruned(self) -> dict[str, set[int]]:
        """The rounds whose global models and client checkpoints the run deleted on purpose
        (``store.retention``)."""
        return retention.pruned(self.meta)

    def prune(self, r: int, keep_global: tuple[str, int], keep_local: tuple[str, int], final_round: int) -> None:
        """Apply --keep-global and --keep-local after round r completes (``store.retention.prune``)."""
        retention.prune(self, r, keep_global, keep_local, final_round)


def find_runs(out: Path, warn: Callable[[str], None] | None = None) -> list[RunDir]:
    """The runs in a store whose run.json can be read; each unreadable one is reported to
    ``warn`` by path (the others still work)."""
    out = Path(out)
    if not out.is_dir():
        return []
    runs = []
    for p in sorted(out.iterdir()):
        if (p / "run.json").is_file() and not p.name.startswith("."):
            try:
                RunDir(p).config
            except CollapseLabError as e:
                if warn is not None:
                    warn(f"skipped: {e}")
                continue
            runs.append(RunDir(p))
    return runs
