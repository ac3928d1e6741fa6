"""TinyImageNet from the standard ``tiny-imagenet-200`` folder.

Train: ``train/<wnid>/images/*.JPEG``; test: the official validation split,
``val/images/*.JPEG`` with labels from ``val/val_annotations.txt`` (the test split has no
labels). Classes are indexed in the order of ``wnids.txt``.
"""
from __future__ import annotations

from pathlib import Path

import torch

from ..errors import CollapseLabError
from .base import Dataset
from .files import require_root
from .images import channel_stats, decode, list_images
from . import DATASETS

LAYOUT = "tiny-imagenet-200/ with wnids.txt, train/<wnid>/images/*.JPEG, val/images/*.JPEG and val/val_annotations.txt"


# FedDecorr Sec. 5.1: 50 rounds, AutoAugment alone.
@DATASETS.register("tinyimagenet", model="mobilenetv2", augment="autoaugment", paper=dict(rounds=50))
def load_tinyimagenet(data_root: Path | None = None, download: bool = False, image_size: int | None = None) -> Dataset:
    root = require_root("tinyimagenet", data_root, LAYOUT)
    if download:
        raise CollapseLabError(f"tinyimagenet has no downloader here; unzip tiny-imagenet-200.zip into {root} so that it holds {LAYOUT}")
    base = root / "tiny-imagenet-200"
    need = [base / "wnids.txt", base / "train", base / "val" / "images", base / "val" / "val_annotations.txt"]
    missing = [str(p.relative_to(root)) for p in need if not p.exists()]
    if missing:
        raise CollapseLabError(f"tinyimagenet: {', '.join(missing)} not found under {root}; it should hold {LAYOUT}")
    wnids = [w.strip() for w in (base / "wnids.txt").read_text().split() if w.strip()]
    index = {w: i for i, w in enumerate(wnids)}
    paths, labels = [], []
    for w in wnids:
        files = list_images(base / "train" / w / "images") if (base / "train" / w / "images").is_dir() else []
        paths += files
        labels += [index[w]] * len(files)
    vpaths, vlabels = [], []
    for line in (base / "val" / "val_annotations.txt").read_text().splitlines():
        parts = line.split("\t")
        if len(parts) < 2:
            continue
        if parts[1] not in index:
            raise CollapseLabError(f"val_annotations.txt names class {parts[1]} that wnids.txt does not list")
        vpaths.append(base / "val" / "images" / parts[0])
        vlabels.append(index[parts[1]])
    xtr = decode(paths, image_size)
    xte = decode(vpaths, image_size)
    mean, std = channel_stats(xtr)
    return Dataset("tinyimagenet", xtr, torch.tensor(labels), xte, torch.tensor(vlabels), num_classes=len(wnids),
                   scale=255.0, mean=mean, std=std, class_names=wnids)
