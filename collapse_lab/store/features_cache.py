"""The store's cache of representations: ``<store>/.features/<key>.safetensors``, one tensor
``z`` per key (or a layer's spectra, ``get_all``/``put_all``) (the analysis keys it by checkpoint content, model, data and split:
``analysis.features.extract``). Entries are written atomically; a damaged one reads as
missing and is written again; a read-only store works without the cache."""
from __future__ import annotations

from pathlib import Path

import torch

from ..errors import CollapseLabError
from ..tensor_files import load_tensors, save_tensors


class FeaturesCache:
    def __init__(self, store: Path):
        self.folder = Path(store) / ".features"

    def get(self, key: str) -> torch.Tensor | None:
        got = self.get_all(key)
        return None if got is None else got.get("z")

    def put(self, key: str, z: torch.Tensor, metadata: dict[str, str]) -> None:
        """Raises OSError where the store is not writable (the caller goes on without it)."""
        self.put_all(key, {"z": z}, metadata)

    def get_all(self, key: str) -> dict[str, torch.Tensor] | None:
        """An entry's tensors (the per-layer spectra of ``collapse-lab layers`` keep several)."""
        path = self.folder / f"{key}.safetensors"
        if not path.is_file():
            return None
        try:
            return load_tensors(path)
        except CollapseLabError:
            return None  # a damaged entry is recomputed and rewritten

    def put_all(self, key: str, tensors: dict[str, torch.Tensor], metadata: dict[str, str]) -> None:
        save_tensors(self.folder / f"{key}.safetensors", tensors, metadata=metadata)
