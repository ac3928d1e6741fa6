"""The store's cache of representations: ``<store>/.features/<key>.safetensors``, one tensor
``z`` per key (the analysis keys it by checkpoint content, model, data and split:
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
        path = self.folder / f"{key}.safetensors"
        if not path.is_file():
            return None
        try:
            return load_tensors(path)["z"]
        except (CollapseLabError, KeyError):
            return None  # a damaged entry is recomputed and rewritten

    def put(self, key: str, z: torch.Tensor, metadata: dict[str, str]) -> None:
        """Raises OSError where the store is not writable (the caller goes on without it)."""
        save_tensors(self.folder / f"{key}.safetensors", {"z": z}, metadata=metadata)
