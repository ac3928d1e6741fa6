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
import unicodedata
from pathlib import Path

import numpy as np
import torch

from ..errors import CollapseLabError
from . import lock
from .paths import check_name, check_store_for_writing, child
from .recorded import json_value, run_config, whole
from .run_dir import RunDir

EVENT_KEYS = ("event", "round", "clients")  # a metrics event's own keys: no metric may take them


def _tensors(state, what: str) -> dict[str, torch.Tensor]:
    if not isinstance(state, dict) or not state or not all(isinstance(k, str) for k in state) \
            or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise CollapseLabError(f"{what}: give a non-empty state dict of tensors (model.state_dict())")
    for k, v in state.items():  # a diverged model is not a round of a run (as NaN metrics are refused)
        if v.is_floating_point() and not bool(torch.isfinite(v).all()):
            raise CollapseLabError(f"{what}: tensor {k!r} holds NaN or infinite values; a diverged model is not "
                                   "recorded (stop the run, or record the rounds before it diverged)")
    return {k: v.detach().to("cpu").contiguous().clone() for k, v in state.items()}


class RunWriter:
    """Open (or continue) one run of ``store``. ``config``: the run's options, named as
    ``collapse-lab train``'s (``dataset``, ``model``, ``clients``, ``rounds``, ``alpha``,
    ``partition``, ``seed``, ``lr``, ``local_epochs``, ...; unknown keys are refused; the
    training settings not given are recorded as null, not as collapse-lab's defaults),
    ``source``: free-form facts about where it was trained (kept in run.json). The split:
    ``client_indices`` (one index list into the training set per client) with the training
    ``labels`` and ``num_classes``, or only ``client_sizes``. ``initial``: the global state
    before round 1 (round 0), where you have it. ``normalize``: the input normalisation the
    model was trained with (``data.normalize``: ``"0.5/0.5"``, ``((mean...), (std...))``,
    ``"dataset"``, ``"none"``; not given: ``unknown``, and the analyses say so).
    ``data_root``: where the data set's files are (the analyses otherwise use the command's
    ``--data-root``). ``gaps``: rounds may be skipped (an import of the rounds another code
    saved; a skipped round has no files and its number no event).

    Every argument is checked before anything is written; a bad one is one CollapseLabError."""

    def __init__(self, store, config: dict, client_indices=None, labels=None, num_classes: int | None = None,
                 client_sizes=None, initial: dict | None = None, name: str | None = None, source: dict | None = None,
                 gaps: bool = False, normalize=None, data_root=None, extend: bool = False):
        cfg = run_config(config, normalize, data_root)
        init = None if initial is None else _tensors(initial, "initial")
        source = json_value(source or {}, "RunWriter source")
        partition = _partition(client_indices, labels, num_classes)
        if partition is not None:
            client_sizes = [len(ix) for ix in client_indices]
        if client_sizes is not None:
            if not all(whole(n) and n >= 0 for n in client_sizes):
                raise CollapseLabError("RunWriter: client_sizes must be whole numbers >= 0")
            if len(client_sizes) != cfg.clients:
                raise CollapseLabError(f"RunWriter: {len(client_sizes)} clients' data given, the config says clients "
                                       f"{cfg.clients}")
        self.config, self.gaps, self.closed = cfg, gaps, False
        self.name = name or cfg.run_name()
        check_name(self.name, "the run name")
        if name is not None:  # a name of the caller's: what train --tag admits, in a longer form
            bad = next((c for c in name if not (c.isalnum() or c in "._-+=,@") or unicodedata.category(c)[0] in "CZ"), None)
            if bad is not None:
                raise CollapseLabError(f"RunWriter name {name!r}: the character {bad!r} cannot be part of a run folder "
                                       "name; use letters, digits and . _ - + = , @")
        self.store = check_store_for_writing(store, "store")
        path = child(self.store, self.name)
        if lock.held_here(path):
            raise CollapseLabError(f"RunWriter: {path} already has a writer in this process; close() it first (one "
                                   "writer per run)")
        lock.acquire(path)
        self.run = RunDir(path)
        try:
            if self.run.exists():  # continue a run recorded before
                self._continue(cfg, extend)
                return
            extra = {"client_sizes": [int(n) for n in client_sizes] if client_sizes is not None else None,
                     "recorded_by": "collapse_lab.store.writer", "source": source}
            self.store.mkdir(parents=True, exist_ok=True)
            RunDir.create(self.store, self.name, cfg.to_json(), partition, init, extra)
        except BaseException:
            lock.release(path)
            raise

    def _continue(self, cfg, extend: bool) -> None:
        """Open a run recorded before (the same configuration; a complete one only to extend it)."""
        path = self.run.path
        if {**self.run.config.identity(), "rounds": 0} != {**cfg.identity(), "rounds": 0}:  # an extension's length differs
            raise CollapseLabError(f"{path} holds a run of another configuration; give another name= or store")
        meta = self.run.meta
        done = int(meta.get("rounds_complete", 0))
        if meta.get("status") == "complete":
            if not extend:
                raise CollapseLabError(f"RunWriter: {path} is complete with {done} round(s); give extend=True "
                                       "(and rounds= the new length) to add rounds to it")
            if cfg.rounds <= done:
                raise CollapseLabError(f"RunWriter: extend=True with rounds {cfg.rounds}: {path} already has "
                                       f"{done}; give the new, larger length as rounds")
            self.run.update(status="running", rounds=cfg.rounds)
        self.run.discard_after(done)  # a crashed round's files

    @property
    def next_round(self) -> int:
        """The round to write next (1 for a new run; after a crash, the first incomplete one)."""
        return int(self.run.meta.get("rounds_complete", 0)) + 1

    def _open(self) -> None:
        if self.closed:
            raise CollapseLabError(f"RunWriter: {self.run.path.name} is closed; open a new RunWriter to continue it")

    def write_initial(self, state: dict) -> None:
        """The global model before round 1 (round 0), before any round is written."""
        self._open()
        tensors = _tensors(state, "initial")
        if self.next_round != 1 or self.run.global_path(0).is_file():
            raise CollapseLabError("RunWriter: the initial model (round 0) is written once, before round 1")
        self.run.save_global(0, tensors)

    def log_initial_metrics(self, metrics: dict) -> None:
        """The initial model's (round 0's) numbers, e.g. Flower's first ``evaluate_fn`` call,
        once, before round 1 (an event of round 0, as ``train`` logs its own)."""
        self._open()
        if self.next_round != 1 or any(e.get("round") == 0 for e in self.run.metrics()):
            raise CollapseLabError("RunWriter: round 0's metrics are written once, before round 1")
        numbers = json_value(dict(metrics), "RunWriter: a metric of round 0")
        clash = [k for k in numbers if k in EVENT_KEYS]
        if clash:
            raise CollapseLabError(f"RunWriter: metric {clash[0]!r} is a name the store keeps for itself; rename it")
        self.run.log({"event": "round", "round": 0, **numbers})

    def note(self, **facts) -> None:
        """Facts learnt while the run goes (the clients' sizes and label counts from their
        replies): kept in run.json beside what the writer was given."""
        self._open()
        facts = json_value(facts, "RunWriter note")
        if "client_sizes" in facts and len(facts["client_sizes"]) != self.config.clients:
            raise CollapseLabError(f"RunWriter: {len(facts['client_sizes'])} client sizes, the run has "
                                   f"{self.config.clients} clients")
        self.run.update(**facts)

    def write_round(self, r: int, global_state: dict, clients: dict | None = None, metrics: dict | None = None) -> None:
        """Round ``r``'s global model, each client's model after its local training
        (``{client index: state dict}``) and its numbers (``test_acc`` and anything
        JSON-able), in that order; then the round counts as complete. Everything is checked
        before the round's first file is written."""
        self._open()
        if not whole(r) or r < 1:
            raise CollapseLabError(f"RunWriter: round {r!r} is not a whole number >= 1 (round 0 is initial=...)")
        r = int(r)
        if r != self.next_round and not (self.gaps and r > self.next_round):
            raise CollapseLabError(f"RunWriter: round {r} given, round {self.next_round} is next (rounds are written "
                                   "in order, each once)")
        if clients is not None and not isinstance(clients, dict):
            raise CollapseLabError("RunWriter: clients is a dict {client index: state dict}")
        states = {}
        for k, state in (clients or {}).items():
            if not whole(k) or not 0 <= k < self.config.clients:
                raise CollapseLabError(f"RunWriter: client {k!r} is not an index in 0..{self.config.clients - 1} "
                                       f"(the run has {self.config.clients} clients)")
            states[int(k)] = _tensors(state, f"client {k} of round {r}")
        glob = _tensors(global_state, f"global model of round {r}")
        if metrics is not None and not isinstance(metrics, dict):
            raise CollapseLabError("RunWriter: metrics is a dict of numbers")
        if not all(isinstance(k, str) for k in (metrics or {})):
            raise CollapseLabError("RunWriter: metric names must be text")
        numbers = {k: json_value(v, f"RunWriter: metric {k!r} of round {r}") for k, v in (metrics or {}).items()}
        clash = [k for k in numbers if k in EVENT_KEYS]
        if clash:
            raise CollapseLabError(f"RunWriter: metric {clash[0]!r} is a name the store keeps for itself; rename it")
        for k, state in states.items():
            self.run.save_client(r, k, state)
        self.run.save_global(r, glob)
        self.run.log({"event": "round", "round": r, "clients": sorted(states), **numbers})
        self.run.update(rounds_complete=r, status="running", updated=time.strftime("%Y-%m-%dT%H:%M:%S%z"))

    def close(self, complete: bool | None = None) -> Path:
        """Mark the run complete (when all its rounds are written, or ``complete=True``) and
        release it; returns its folder."""
        if self.closed:
            return self.run.path
        done = self.next_round - 1
        if complete if complete is not None else done >= self.config.rounds:
            self.run.update(status="complete", rounds=max(done, 1) if complete else self.config.rounds)
        self.closed = True
        lock.release(self.run.path)
        return self.run.path

    def __enter__(self) -> "RunWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.closed = True
            lock.release(self.run.path)  # an error mid-way: the rounds written stay, resumable


def _partition(client_indices, labels, num_classes):
    """The clients' partition from their indices into the training labels (None: not given)."""
    if client_indices is None:
        return None
    from ..partition import Partition

    if labels is None or num_classes is None:
        raise CollapseLabError("RunWriter: client_indices need the training labels and num_classes")
    try:
        return Partition.from_indices([np.asarray(ix, dtype=np.int64) for ix in client_indices],
                                      np.asarray(labels), int(num_classes))
    except (ValueError, IndexError, TypeError) as e:
        raise CollapseLabError(f"RunWriter: client_indices do not index the labels ({e})") from None
