"""Compute z for every sample of an evaluation set, batched, on the GPU when present.

The cache lives beside the run store, ``<store>/.features/<key>.safetensors``, keyed by
the sha256 of the checkpoint file (checkpoint files are byte-deterministic), the model
name, the data set's content fingerprint, the split and the dtype. A second analysis of
the same checkpoint reads z from there instead of running the model.
"""
from __future__ import annotations

import hashlib

import torch

from ...config import RunConfig
from ...data import Dataset, normalize, read_dataset
from ...data_root import default_data_root
from ...devices import resolve_device
from ...errors import CollapseLabError
from ...models import build_model, builder
from ...store import RunDir, retention

DTYPES = {"float64": torch.float64, "float32": torch.float32}


def dataset_fingerprint(ds: Dataset, split: str) -> str:
    x, y = getattr(ds, f"{split}_x"), getattr(ds, f"{split}_y")
    h = hashlib.sha256()
    h.update(repr((ds.name, split, tuple(x.shape), str(x.dtype), ds.scale, ds.mean, ds.std)).encode())
    h.update(x.contiguous().numpy().tobytes())
    h.update(y.contiguous().numpy().tobytes())
    return h.hexdigest()


@torch.inference_mode()
def extract_features(model: torch.nn.Module, x: torch.Tensor, to_float, dtype: torch.dtype = torch.float64,
                     device: torch.device | str = "cpu", batch_size: int = 1024) -> torch.Tensor:
    """z for every row of x, in eval mode (BatchNorm uses its running statistics).
    ``to_float(x, dtype)`` normalises a stored batch (``Dataset.to_float``).

    The data path of training: the uint8 set moved to the device once, batches cut there.
    float64 by default: collapsed tails lie below float32's resolution."""
    model = model.to(device=device, dtype=dtype).eval()
    x = x.to(device)
    out = []
    for s in range(0, len(x), batch_size):
        xb = to_float(x[s : s + batch_size], dtype)  # normalised in the feature dtype
        out.append(model(xb)[1].to("cpu"))
    return torch.cat(out) if out else torch.zeros(0, model.feature_dim, dtype=dtype)


class FeatureSource:
    """Reads runs' checkpoints and returns their representations, caching them on disk.

    ``model_factory`` (``package.module:function``) builds the architecture of runs written
    outside collapse-lab (``--model-factory``); their representation is the output of
    ``layer`` or the input of the last linear layer (``hooks.features``). ``data_root``:
    where the data of a run that records none are read (the command's ``--data-root``,
    else the environment and the user config file). All of it is given here, per source:
    nothing is read from the process."""

    def __init__(self, split: str = "test", dtype: str = "float64", device: str = "auto", batch_size: int = 1024,
                 use_cache: bool = True, model_factory: str | None = None, layer: str | None = None,
                 data_root: str | None = None):
        if split not in ("test", "train"):
            raise CollapseLabError(f"--split {split!r}: use test or train")
        if dtype not in DTYPES:
            raise CollapseLabError(f"--feature-dtype {dtype!r}: use float64 or float32")
        self.split, self.dtype, self.batch_size, self.use_cache = split, dtype, batch_size, use_cache
        self.device = resolve_device(device)
        self._datasets: dict[tuple, tuple[Dataset, str]] = {}
        self.computed = 0  # model forward passes over a whole evaluation set (cache misses)
        self.factory_spec, self.layer, self.data_root = model_factory, layer, data_root
        from .hooks import load_factory

        if self.layer is not None and not str(self.layer).strip():
            raise CollapseLabError("--layer is empty; name a module (model.named_modules()) or leave --layer out for "
                                   "the input of the last linear layer")
        self.factory = load_factory(self.factory_spec) if self.factory_spec else None
        self._warned: set[str] = set()
        self._held: tuple = (None, "", {}, None)  # ``_checkpoint``: the one checkpoint a reader holds

    def dataset(self, cfg: RunConfig) -> tuple[Dataset, str]:
        """The run's evaluation data, normalised as its model saw it (``cfg.normalize``)."""
        key = (cfg.dataset, cfg.data_root, cfg.image_size, tuple(sorted(cfg.dataset_options.items())), cfg.normalize)
        if key not in self._datasets:
            raw = self._load(cfg)
            ds = normalize.apply(raw, self._normalization(cfg, raw))
            self._datasets[key] = (ds, dataset_fingerprint(ds, self.split))
        return self._datasets[key]

    def _load(self, cfg: RunConfig) -> Dataset:
        """The run's data set from the data root its run.json records; where it records none
        (a run recorded from other code) or its files moved, from the command's data root
        (--data-root, $COLLAPSE_LAB_DATA, the user config file). Errors name the source used."""
        root, where = default_data_root(self.data_root)
        tried = []
        for r, src in ((cfg.data_root, "its run.json"), (root, where)):
            if (r is None and cfg.data_root is not None) or any(r == t for t, _ in tried):
                continue  # a run that records a root is read from there or from the command's root
            try:
                return read_dataset(cfg.dataset, r, False, cfg.image_size, **cfg.dataset_options)
            except CollapseLabError as e:
                tried.append((r, f"{r} ({src}): {e}" if r is not None else f"{e} (its run.json records no data root, "
                              "and the command has none)"))
        if len(tried) == 1 and tried[0][0] is None:
            raise CollapseLabError(f"the run's data set {cfg.dataset} cannot be read: {tried[0][1]}; give --data-root "
                                   "DIR or set COLLAPSE_LAB_DATA")
        raise CollapseLabError(f"the run's data set {cfg.dataset} cannot be read from "
                               + "; nor from ".join(t for _, t in tried)
                               + ("" if root is not None else "; give --data-root DIR or set COLLAPSE_LAB_DATA"))

    def _normalization(self, cfg: RunConfig, ds: Dataset) -> str:
        """The normalisation the run records; where it records none ("unknown"), what the
        model factory returns beside its model, else the data set's, said once on stderr."""
        if cfg.normalize != "unknown":
            return cfg.normalize
        if self.factory is not None:
            from .hooks import build_from_factory

            _, norm = build_from_factory(self.factory, ds.num_classes, ds.input_shape, self.factory_spec,
                                         with_normalize=True)
            if norm is not None:
                return norm
        self._warn_unknown(cfg)
        return "dataset"

    def _warn_unknown(self, cfg: RunConfig) -> None:
        if cfg.dataset not in self._warned:
            self._warned.add(cfg.dataset)
            import sys

            print(f"warning: runs of {cfg.dataset} recorded without their input normalisation are analysed with "
                  "collapse-lab's; if the model was trained on other inputs, record them (RunWriter "
                  "normalize=..., import --normalize MEAN/STD)", file=sys.stderr)

    def check_stored(self, run: RunDir, r: int, client: int | None) -> None:
        if client is None and run.has_global(r) or client is not None and run.has_client(r, client):
            return
        what = "global model" if client is None else f"client {client}"
        have = run.clients_at(r)
        hint = f"; clients stored for round {r}: {have}" if client is not None and have else ""
        raise CollapseLabError(f"{run.path.name}: no {what} checkpoint for round {r} ({run.checkpoint_name(r, client)} "
                               f"missing){hint}")

    def stored_state(self, run: RunDir, r: int, client: int | None) -> dict[str, torch.Tensor]:
        """The checkpoint's raw tensors (a classifier's weights), a missing one named."""
        return self._checkpoint(run, r, client)[1]

    def _checkpoint(self, run: RunDir, r: int, client: int | None) -> tuple[str, dict[str, torch.Tensor]]:
        """A checkpoint's sha256 and tensors, read once under the run's read lock and held
        for the reader's next steps (its cache lookup, its model, its classifier): a writer
        that prunes the round between them (``--keep-global last`` as it trains) cannot take
        the file from under one model's analysis. One is held at a time; a file since
        rewritten (the run retrained) is read again."""
        key = (str(run.path), r, client)
        if self._held[0] != key or run.checkpoint_stamp(r, client) not in (None, self._held[3]):
            with retention.read_lock(run.path):
                retention.check_readable_round(run, r, client)
                self.check_stored(run, r, client)
                sha = run.checkpoint_sha256(r, client)
                state = run.load_global(r) if client is None else run.load_client(r, client)
                seen = run.checkpoint_stamp(r, client)
            self._held = (key, sha, state, seen)
        return self._held[1], self._held[2]

    def check_buildable(self, cfg: RunConfig) -> None:
        """A run's model is one collapse-lab builds, or --model-factory gives it (checked
        before any work is shown)."""
        from ...models import MODELS

        if self.factory is None and cfg.model not in MODELS.names():  # the run names it; the user gave no --model
            raise CollapseLabError(f"the run's model {cfg.model!r} is not one collapse-lab builds (the run was recorded "
                                   "from other code); give --model-factory MODULE:FUNCTION that builds it (docs/api.md)")

    def architecture(self, cfg: RunConfig, ds: Dataset) -> torch.nn.Module:
        """The run's model, untrained: from --model-factory for a model from elsewhere, else
        the bare architecture (a method's additions beside z, MOON's head, are not read, and
        FedETF's fixed classifier is an ordinary classifier's weights)."""
        if self.factory is not None:
            from .hooks import build_from_factory

            return build_from_factory(self.factory, ds.num_classes, ds.input_shape, self.factory_spec)
        self.check_buildable(cfg)
        return build_model(builder(cfg.model, cfg.model_revision), ds.num_classes, ds.input_shape)

    def model(self, run: RunDir, r: int, client: int | None = None) -> torch.nn.Module:
        """The global (client None) or client's model of round r, loaded under the run's read
        lock (a round a writer pruned is named as such)."""
        from ...tensor_files import check_state

        model = self.architecture(run.config, self.dataset(run.config)[0])
        state, expected = self._checkpoint(run, r, client)[1], model.state_dict()
        check_state(f"{run.path}/{run.checkpoint_name(r, client)}", state, expected, extra_ok=True)
        model.load_state_dict({k: state[k] for k in expected})
        return model

    def _lookup(self, run: RunDir, r: int, client: int | None, what: str, fp: str):
        """The cache key of ``what`` computed from a stored model (its checkpoint's content,
        the model, the data, the split, the dtype) and the cached tensors or None; the
        checkpoint's hash is the one held (``_checkpoint``)."""
        how = f"{run.config.model}" + (f"|{self.factory_spec}|{self.layer}" if self.factory or self.layer else "")
        sha = self._checkpoint(run, r, client)[0]
        key = hashlib.sha256(f"{sha}|{how}|{fp}|{self.split}|{self.dtype}{what}".encode()).hexdigest()[:32]
        return key, run.features_cache().get_all(key) if self.use_cache else None

    def _store(self, run: RunDir, r: int, client: int | None, key: str, tensors: dict) -> None:
        if not self.use_cache:
            return
        cache = run.features_cache()
        try:
            cache.put_all(key, tensors, {"checkpoint": f"{run.path}/{run.checkpoint_name(r, client)}",
                                         "split": self.split})
        except OSError as e:  # a read-only store (a mount, permissions): analyse without the cache
            self.use_cache = False
            import sys

            print(f"warning: {cache.folder} is not writable ({e.strerror or type(e).__name__}); representations "
                  "are computed without the feature cache", file=sys.stderr)

    def features(self, run: RunDir, r: int, client: int | None = None) -> torch.Tensor:
        ds, fp = self.dataset(run.config)
        key, got = self._lookup(run, r, client, "", fp)
        if got is not None and "z" in got:
            return got["z"]
        model = self.model(run, r, client)
        x = getattr(ds, f"{self.split}_x")
        if self.factory is not None or self.layer is not None:  # a model from elsewhere, or another layer
            from .hooks import features

            z = features(model, x, self.layer, ds.to_float, DTYPES[self.dtype], self.device, self.batch_size)
        else:
            z = extract_features(model, x, ds.to_float, DTYPES[self.dtype], self.device, self.batch_size)
        self.computed += 1
        if not bool(torch.isfinite(z).all()):  # a diverged run stored before divergence was recorded
            raise CollapseLabError(f"{run.path.name}: the {'global' if client is None else f'client {client}'} model "
                                   f"of round {r} gives non-finite representations (the run diverged); analyse an "
                                   "earlier --round or another run")
        self._store(run, r, client, key, {"z": z})
        return z

    def layers(self, run: RunDir, r: int, client: int | None = None, layers: list[str] | None = None,
               positions: int = 0) -> dict[str, tuple[torch.Tensor, float, int]]:
        """Per layer, the spectrum of a stored model's layer on the split
        (``layerwise.layer_spectra``: name -> singular values, floor, width), cached like z
        and keyed also by the layers asked for and how a convolutional map is reduced."""
        import json

        from ...layerwise import layer_spectra

        ds, fp = self.dataset(run.config)
        how = f"pos{positions}" if positions else "gap"
        key, got = self._lookup(run, r, client, f"|layers|{how}|{json.dumps(list(layers or []))}", fp)
        if got is not None and "names" in got:
            names = json.loads(bytes(got["names"].tolist()).decode())
            return {n: (got[f"sv.{i}"], float(got["floor"][i]), int(got["width"][i])) for i, n in enumerate(names)}
        out = layer_spectra(self.model(run, r, client), getattr(ds, f"{self.split}_x"), list(layers or []) or None,
                            ds.to_float, self.device, self.batch_size, dtype=DTYPES[self.dtype], positions=positions)
        self.computed += 1
        tensors = {f"sv.{i}": sv for i, (sv, _, _) in enumerate(out.values())}
        tensors.update(names=torch.tensor(list(json.dumps(list(out)).encode()), dtype=torch.uint8),
                       floor=torch.tensor([f for _, f, _ in out.values()], dtype=torch.float64),
                       width=torch.tensor([w for *_, w in out.values()], dtype=torch.int64))
        self._store(run, r, client, key, tensors)
        return out
