"""What a renderer reads: the store, the preset, the entry's runs (named by the catalogue's
plan, ``collapse_lab.plan``, above the analysis) and their features."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import torch

from ..config import RunConfig
from .features import FeatureSource
from ..spectra.functional import spectrum
from ..store import RunDir
from ..store.naming import in_stored_precisions
from .catalogue import Entry
from .select import Group, groups


@dataclass
class Context:
    store: Path
    preset: str
    plan: object  # the entries' runs: ``plan.runs(entry)``, a table cell's ``plan.cell(entry, options)``
    features: FeatureSource | None = None  # default: the test set's float64 representations
    smoke: bool = False  # the entry's smoke runs (figures/tables --smoke)
    seed: int | None = None  # only the runs of this seed (a claim checked per seed); None: every seed
    data_root: str | None = None  # the command's --data-root, for runs that name none
    precision: str | None = None  # the command's --precision for the entries' runs (None: the runs' default, auto)
    overrides: dict = field(default_factory=dict)  # the command's --set, applied to every run of an entry
    _configs: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.features is None:
            self.features = FeatureSource(split="test", dtype="float64", data_root=self.data_root)

    def configs(self, entry: Entry) -> list[RunConfig]:
        if entry.name not in self._configs:
            cs = self.plan.runs(entry)
            # --precision not given: a stored run keeps the precision it trained in (store.naming)
            self._configs[entry.name] = cs if self.precision is not None else in_stored_precisions(self.store, cs)
        return self._configs[entry.name]

    def groups(self, entry: Entry, where: dict | None = None) -> list[Group]:
        configs = self.configs(entry)
        if self.seed is not None:
            configs = [c for c in configs if c.seed == self.seed]
        return groups(entry, self.preset, self.store, where, configs)

    def trained_in(self, entry: Entry) -> str:
        """The precision the entry's runs trained in (fp32, bf16; "fp32+bf16" if they differ),
        said beside its numbers."""
        return "+".join(sorted({c.precision for c in self.configs(entry)})) or "none (no runs)"

    def seeds(self, entry: Entry) -> list[int]:
        """The seeds the entry's runs at this preset train."""
        return sorted({c.seed for c in self.configs(entry)})

    def spectrum(self, run: RunDir, r: int, client: int | None) -> tuple[torch.Tensor, float]:
        """Singular values (float64, descending) of the covariance of the test
        representations of the global model (client None) or client k's local model."""
        return spectrum(self.features.features(run, r, client))


def last_round(run: RunDir, r: int | None = None) -> int:
    """The round a renderer reads: ``r`` where a panel names one, else the last round of the
    entry's run (``select.groups``: a run extended beyond it is read where the entry's ends),
    else the run's last complete round."""
    if r is not None:
        return int(r)
    read = getattr(run, "read_round", None)
    return int(read) if read is not None else int(run.meta["rounds_complete"])
