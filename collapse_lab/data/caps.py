"""Per-class caps that select by content, not by position (``--dataset-option
max_train_per_class=N max_test_per_class=M``, the cpu preset's fixed-size CIFAR-10).

Each sample is ranked by a hash of its stored bytes: the first 8 bytes of BLAKE2b
(``digest_size=8``, little-endian) of ``x[i]`` as stored (uint8 for images, C order). The N
samples of lowest rank in every class (every (domain, class) of a domain set) are kept, and the
kept set is put in rank order (ties: the label, then the domain). So two copies of one data set
whose files hold the images in another order give the same images in the same order, hence the
same partition, the same batches and the same run bytes. The subset is the same for every
seed: a seed varies the partition, the initial model and the batches, never the data set.

A split without a cap is left whole and in the files' order (so ``--partition-option
rng=released`` keeps its parity with the released code on the official order).
"""
from __future__ import annotations

import hashlib

import numpy as np
import torch

from ..errors import CollapseLabError


def content_rank(x: torch.Tensor) -> np.ndarray:
    """The 64-bit content hash of every sample (row of ``x``), as unsigned integers."""
    flat = x.reshape(len(x), -1).contiguous().numpy()
    return np.fromiter((int.from_bytes(hashlib.blake2b(row.tobytes(), digest_size=8).digest(), "little")
                        for row in flat), dtype=np.uint64, count=len(flat))


def _name(ds, c: int) -> str:
    name = ds.class_names[c] if c < len(ds.class_names) else str(c)
    return f"class {c}" + (f" ({name})" if name != str(c) else "")


def capped_indices(ds, split: str, per: int) -> torch.Tensor:
    """Indices of the ``per`` lowest-ranked samples of every (domain, class) of ``split``, in
    rank order. A class with no sample, or a group with fewer than ``per``, is one error line."""
    x, y = getattr(ds, f"{split}_x"), getattr(ds, f"{split}_y").numpy()
    dom = getattr(ds, f"{split}_domain")
    flag = f"--dataset-option max_{split}_per_class={per}"
    missing = sorted(set(range(ds.num_classes)) - set(np.unique(y).tolist()))
    if missing and dom is None:
        raise CollapseLabError(f"{flag}: {ds.name} has no {split} sample of {_name(ds, missing[0])}"
                               f"{f' (and {len(missing) - 1} other classes)' if len(missing) > 1 else ''}; "
                               "a per-class cap needs every class: give the complete data set")
    d = np.zeros(len(y), dtype=np.int64) if dom is None else dom.numpy().astype(np.int64)
    rank = content_rank(x)
    keep = []
    for g in np.unique(d * ds.num_classes + y):
        members = np.flatnonzero(d * ds.num_classes + y == g)
        if len(members) < per:
            where = _name(ds, int(g % ds.num_classes)) + (f" of domain {ds.domains[int(g // ds.num_classes)]}"
                                                         if dom is not None and ds.domains else "")
            raise CollapseLabError(f"{flag}: {where} has only {len(members)} {split} samples in {ds.name}; lower the "
                                   f"cap to at most {len(members)} or give the complete data set")
        members = members[np.lexsort((members, rank[members]))]  # ties are byte-identical samples
        keep.append(members[:per])
    kept = np.concatenate(keep) if keep else np.zeros(0, dtype=np.int64)
    order = np.lexsort((d[kept], y[kept], rank[kept]))
    return torch.from_numpy(kept[order])


def capped_per_class(ds, train: int | None, test: int | None):
    """``ds`` with at most ``train`` training and ``test`` test samples of every (domain,
    class), chosen and ordered by content (module docstring); None leaves a split as it is."""
    from .base import _subset

    tr = torch.arange(len(ds.train_y)) if train is None else capped_indices(ds, "train", train)
    te = torch.arange(len(ds.test_y)) if test is None else capped_indices(ds, "test", test)
    return _subset(ds, tr, te)
