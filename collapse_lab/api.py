"""The Python API (docs/api.md): open a store and its runs, get representations, compute
the measures, draw the plots, train with the CLI's resolver, record runs from elsewhere.
Everything here is a thin door onto the modules the commands use; names exported from
``collapse_lab`` (``import collapse_lab as cl; cl.open_store(...)``) are the stable surface."""
from __future__ import annotations

from pathlib import Path

import torch

from .config import RunConfig
from .errors import CollapseLabError
from .store import RunDir, find_runs


class Run:
    """One stored run (read-only): its configuration, rounds, clients, metrics, checkpoints
    and representations."""

    def __init__(self, path):
        self.dir = RunDir(Path(path))
        if not self.dir.exists():
            raise CollapseLabError(f"{path}: not a run folder (no run.json); open <store>/<run>")
        self.dir.meta  # an unreadable or newer-format run.json is one error here

    def __repr__(self) -> str:
        return (f"Run({self.name!r}, {self.label}, {self.status}, rounds {self.rounds_complete}/"
                f"{self.meta.get('rounds')})")

    @property
    def label(self) -> str:
        """The run in words, with the settings that tell runs of one store apart (two
        folder names may differ by their hash alone): 'FedAvg, α = 0.01 (digits, mlp, lr 0.05,
        20 rounds x 2 epochs, batch 64, seed 0)'."""
        from .labels import label

        m = self.meta
        key = {"method": m.get("method"), "reg": m.get("reg"), "alpha": m.get("alpha"),
               **({"beta": m.get("beta")} if m.get("reg") not in (None, "none") else {})}
        return (f"{label(key)} ({m.get('dataset')}, {m.get('model')}, lr {m.get('lr')}, {m.get('rounds')} rounds x "
                f"{m.get('local_epochs')} epochs, batch {m.get('batch_size')}, seed {m.get('seed')})")

    name = property(lambda self: self.dir.path.name)
    path = property(lambda self: self.dir.path)
    meta = property(lambda self: self.dir.meta, doc="run.json: every resolved option and the run's bookkeeping")
    config = property(lambda self: self.dir.config, doc="the run's RunConfig")
    status = property(lambda self: self.dir.status)  # "interrupted": marked running, no live writer
    rounds_complete = property(lambda self: int(self.meta.get("rounds_complete", 0)))

    @property
    def rounds(self) -> list[int]:
        """The complete rounds whose global model is stored (0 = the initial model, when kept)."""
        return [r for r in range(self.rounds_complete + 1) if self.dir.has_global(r)]

    def clients(self, r: int) -> list[int]:
        """The clients whose local model of round ``r`` is stored."""
        return self.dir.clients_at(r)

    def metrics(self, event: str | None = "round") -> list[dict]:
        """metrics.jsonl's events of one kind (``round``, ``probe``, ``local_epoch``; None: all)."""
        return [e for e in self.dir.metrics() if event is None or e.get("event") == event]

    def state(self, r: int | None = None, client: int | None = None) -> dict[str, torch.Tensor]:
        """The global model's (or ``client``'s local model's) tensors at round ``r`` (default: the last)."""
        r = self.rounds_complete if r is None else r
        return self.dir.load_global(r) if client is None else self.dir.load_client(r, client)

    def features(self, r: int | None = None, client: int | None = None, split: str = "test", dtype: str = "float64",
                 device: str = "cpu", model_factory: str | None = None, layer: str | None = None) -> torch.Tensor:
        """The representations z (N x d) of the run's evaluation set under the global model
        (or ``client``'s) of round ``r`` (default: the last), cached beside the store.
        ``model_factory``/``layer``: for runs recorded from a model outside the registry."""
        from .analysis.features import FeatureSource

        fs = FeatureSource(split=split, dtype=dtype, device=device, model_factory=model_factory, layer=layer)
        return fs.features(self.dir, self.rounds_complete if r is None else r, client)

    def spectrum(self, r: int | None = None, client: int | None = None, **kw) -> tuple[torch.Tensor, float]:
        """Singular values of the representation covariance (descending, float64) and the numerical floor."""
        from .spectra.functional import spectrum

        return spectrum(self.features(r, client, **kw))


    def layers(self, r: int | None = None, client: int | None = None, layers: list[str] | None = None,
               split: str = "test", device: str = "cpu", model_factory: str | None = None, positions: int = 0) -> dict:
        """Per layer (``collapse-lab layers``): name -> (singular values of the covariance of
        the layer's output, descending float64; their numerical floor; the layer's width),
        for the global model (or ``client``'s) of round ``r`` (default: the last). ``layers``:
        names of ``model.named_modules()`` and ``"z"`` (default: the model's blocks, else its
        activations, then z); convolutional maps are pooled per channel (or read at ``positions``
        fixed positions, flattened); cached beside the store."""
        from .analysis.features import FeatureSource

        fs = FeatureSource(split=split, device=device, model_factory=model_factory)
        return fs.layers(self.dir, self.rounds_complete if r is None else r, client, layers, positions)


def open_run(path) -> Run:
    """One run folder, ``<store>/<run>``."""
    return Run(path)


def open_store(store="checkpoints", **where) -> list[Run]:
    """The runs of a store, optionally only those whose run.json fields equal ``where``
    (``alpha="0.05"``, ``method="fedavg"``, ``status="complete"``); alpha compares as train writes it."""
    from .where import value_matches

    path = Path(store)
    if not path.is_dir():
        raise CollapseLabError(f"{store}: no such store folder")
    runs = find_runs(path)
    known = set(RunConfig.__dataclass_fields__).union(*(r.meta for r in runs))
    unknown = sorted(set(where) - known)
    if unknown:
        import difflib

        near = difflib.get_close_matches(unknown[0], sorted(known), n=1)
        raise CollapseLabError(f"open_store({unknown[0]}=...): no run.json field of that name"
                               + (f"; did you mean {near[0]}?" if near else f"; fields: {', '.join(sorted(known)[:30])}"))
    out = []
    for r in runs:
        meta = r.meta
        ok = all(value_matches(meta.get(k), v, k) for k, v in where.items())  # the one run filter
        if ok:
            out.append(Run(r.path))
    return out


def train(store="checkpoints", resume: bool = True, progress: bool = False, **options) -> list[Run]:
    """Train runs from Python through ``collapse-lab train``'s own function
    (``actions.train.train``; preset < data set defaults < ``options``), named as a config
    file names them (``dataset``, ``alphas=[0.05, inf]``, ``seeds``, ``rounds``, ``reg``,
    ``method_options``, ...). Complete runs are skipped, unfinished ones continued
    (``resume``); a run that diverges raises ``training.stops.Diverged``; returns every run."""
    from .actions.train import train as train_runs

    result = train_runs(store, options=options, resume=resume, say=print if progress else (lambda m: None),
                        log=print if progress else None, on_diverged="raise")
    return [Run(p) for p in result.paths]


def configs(**options) -> list[RunConfig]:
    """The final run configurations ``train(**options)`` would train (nothing is written)."""
    from .runspec.resolve import resolve_runs

    return resolve_runs({}, values=options, where="collapse_lab.configs()")
