"""Record a run trained by any loop (Flower, your own code) into a collapse-lab store, so
that every analysis reads it as it reads collapse-lab's own runs (docs/store-format.md)::

    from collapse_lab import RunWriter

    with RunWriter("checkpoints", {"dataset": "digits", "model": "mlp", "clients": 3, "rounds": 5,
                                   "alpha": 0.1}, client_indices=parts) as w:
        for r in range(w.next_round, 6):
            ...                                   # your round
            w.write_round(r, global_model.state_dict(), {k: m.state_dict() for k, m in clients.items()},
                          {"test_acc": acc})

Each round's files are written atomically and the round counts as complete only once
run.json says so (its ``rounds_complete``), after its checkpoints and its metrics event: a
crash leaves the run resumable at the last complete round (``next_round``). One writer per
run (``store.lock``). Tensors only (safetensors): nothing is pickled.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch

from ..config import RunConfig
from ..errors import CollapseLabError
from . import lock
from .paths import check_name, check_store_for_writing, child
from .run_dir import RunDir

RUN_FIELDS = {f for f in RunConfig.__dataclass_fields__}


def _tensors(state: dict, what: str) -> dict[str, torch.Tensor]:
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise CollapseLabError(f"{what}: give a state dict of tensors (model.state_dict())")
    return {k: v.detach().to("cpu").contiguous().clone() for k, v in state.items()}


class RunWriter:
    """Open (or continue) one run of ``store``. ``config``: the run's options, named as
    ``collapse-lab train``'s (``dataset``, ``model``, ``clients``, ``rounds``, ``alpha``,
    ``partition``, ``seed``, ``lr``, ...; unknown keys are refused), ``source``: free-form
    facts about where it was trained (kept in run.json). The split: ``client_indices`` (one
    index list into the training set per client) with the training ``labels`` and
    ``num_classes``, or only ``client_sizes``. ``initial``: the global state before round 1
    (round 0), where you have it. ``gaps``: rounds may be skipped (an import of the rounds
    another code saved; a skipped round has no files and its number no event)."""

    def __init__(self, store, config: dict, client_indices=None, labels=None, num_classes: int | None = None,
                 client_sizes=None, initial: dict | None = None, name: str | None = None, source: dict | None = None,
                 gaps: bool = False):
        unknown = sorted(set(config) - RUN_FIELDS)
        if unknown:
            raise CollapseLabError(f"RunWriter config: unknown option(s) {', '.join(unknown)}; use train's option names "
                                   "(put other facts in source=...)")
        cfg = RunConfig.from_json({**RunConfig().to_json(), **{k: v for k, v in config.items()}})
        self.config, self.gaps = cfg, gaps
        self.store = check_store_for_writing(store, "store")
        self.name = name or cfg.run_name()
        check_name(self.name, "the run name")
        path = child(self.store, self.name)
        lock.acquire(path)
        self.run = RunDir(path)
        if (path / "run.json").is_file():  # continue a run recorded before
            if self.run.config.identity() != cfg.identity():
                lock.release(path)
                raise CollapseLabError(f"{path} holds a run of another configuration; give another name= or store")
            return
        partition = None
        if client_indices is not None:
            from ..partition import Partition

            if labels is None or num_classes is None:
                lock.release(path)
                raise CollapseLabError("RunWriter: client_indices need the training labels and num_classes")
            partition = Partition.from_indices([np.asarray(ix, dtype=np.int64) for ix in client_indices],
                                               np.asarray(labels), int(num_classes))
            client_sizes = [len(ix) for ix in client_indices]
        extra = {"client_sizes": [int(n) for n in client_sizes] if client_sizes is not None else None,
                 "recorded_by": "collapse_lab.store.writer", "source": source or {}}
        try:
            self.store.mkdir(parents=True, exist_ok=True)
            RunDir.create(self.store, self.name, cfg.to_json(), partition,
                          None if initial is None else _tensors(initial, "initial"), extra)
        except BaseException:
            lock.release(path)
            raise

    @property
    def next_round(self) -> int:
        """The round to write next (1 for a new run; after a crash, the first incomplete one)."""
        return int(self.run.meta.get("rounds_complete", 0)) + 1

    def write_round(self, r: int, global_state: dict, clients: dict | None = None, metrics: dict | None = None) -> None:
        """Round ``r``'s global model, each client's model after its local training
        (``{client index: state dict}``) and its numbers (``test_acc`` and anything
        JSON-able), in that order; then the round counts as complete."""
        if r != self.next_round and not (self.gaps and r > self.next_round):
            raise CollapseLabError(f"RunWriter: round {r} given, round {self.next_round} is next (rounds are written "
                                   "in order, each once)")
        for k, state in (clients or {}).items():
            if not isinstance(k, int) or k < 0:
                raise CollapseLabError(f"RunWriter: client {k!r} is not an index >= 0")
            self.run.save_client(r, k, _tensors(state, f"client {k} of round {r}"))
        self.run.save_global(r, _tensors(global_state, f"global model of round {r}"))
        event = {"event": "round", "round": r, "clients": sorted(clients or {}), **(metrics or {})}
        self.run.log(event)
        self.run.update(rounds_complete=r, status="running", updated=time.strftime("%Y-%m-%dT%H:%M:%S%z"))

    def close(self, complete: bool | None = None) -> Path:
        """Mark the run complete (when all its rounds are written, or ``complete=True``) and
        release it; returns its folder."""
        done = self.next_round - 1
        if complete if complete is not None else done >= self.config.rounds:
            self.run.update(status="complete", rounds=max(done, 1) if complete else self.config.rounds)
        lock.release(self.run.path)
        return self.run.path

    def __enter__(self) -> "RunWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            lock.release(self.run.path)  # an error mid-way: the rounds written stay, resumable
