"""Data set registry. ``load_dataset(name, data_root=..., download=...)`` returns a Dataset.

A data set is one file here with a loader decorated ``@DATASETS.register(name, model=...,
partition=..., augment=..., clients=..., paper={...})``: the defaults a run on it gets
(its default model; partition ``dirichlet``, augmentation ``none`` and the number of
clients of ``RunConfig`` unless given) and the paper preset's training values that
differ from the common ones (``config.PAPER``). The loader takes the options it
understands as keyword arguments (``data_root``, ``download``, ``image_size`` or its own,
e.g. gaussian's ``dim``); any other option is refused with the list of its options.
Every data set also takes ``GENERIC`` options: ``val_fraction`` (``base.validation_split``):
a stratified share of the training set held out as the evaluation set, for the tables tuned
on one; ``max_train_per_class``/``max_test_per_class`` (``caps.capped_per_class``): N samples
of every class chosen and ordered by a hash of their bytes, so any copy of the data set in any
file order gives the same subset in the same order (the cpu preset's fixed-size CIFAR-10).
"""
from __future__ import annotations

import json

from pathlib import Path

from ..errors import CollapseLabError
from ..registry import Registry, option_names
from .base import Dataset, stratified_subset, validation_split
from .caps import capped_per_class

# shape and classes: what a model built for the data set takes, known without reading its files
# (collapse-lab import checks a checkpoint against the model on a machine without the data)
INFO_KEYS = {"model", "partition", "augment", "clients", "paper", "cpu", "shape", "classes"}  # cpu: its --preset cpu values
FLAGS = {"data_root": "--data-root", "download": "--download", "image_size": "--image-size"}
GENERIC = ("val_fraction", "max_train_per_class", "max_test_per_class")  # options every data set takes


def _check(name: str, loader, info: dict) -> None:
    if "model" not in info or set(info) - INFO_KEYS:
        raise TypeError(f"data set {name}: register it with model=... and optionally {sorted(INFO_KEYS - {'model'})}")
    option_names(loader)  # no **kwargs


DATASETS: Registry = Registry("data set", __name__, flag="--dataset", check=_check)


def load_dataset(name: str, data_root: str | Path | None = None, download: bool = False, image_size: int | None = None,
                 **options) -> Dataset:
    """Options left at None/False are not passed; one the loader does not take is an error."""
    loader = DATASETS.get(name)
    given = dict(options)
    val = given.pop("val_fraction", None)
    caps = {k: given.pop(k, None) for k in ("max_train_per_class", "max_test_per_class")}
    for k, v in caps.items():
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise CollapseLabError(f"--dataset-option {k}={v!r}: give a whole number >= 1")
    if data_root is not None:
        given["data_root"] = Path(data_root)
    if download:
        given["download"] = True
    if image_size is not None:
        given["image_size"] = image_size
    accepted = option_names(loader)
    unknown = [k for k in given if k not in accepted]
    if unknown:
        own = [k for k in accepted if k not in FLAGS]
        named = ", ".join(FLAGS.get(k, f"--dataset-option {k}") for k in unknown)
        raise CollapseLabError(f"{named}: data set {name} does not take it; drop it"
                               + (f" (its --dataset-option keys: {', '.join(own)})" if own else ""))
    def read():
        ds = loader(**given)
        if any(v is not None for v in caps.values()):
            ds = capped_per_class(ds, caps["max_train_per_class"], caps["max_test_per_class"])
        return ds

    if val is None:
        return read()
    try:
        val = float(val)
    except (TypeError, ValueError):
        raise CollapseLabError(f"--dataset-option val_fraction={val!r} is not a number") from None
    if not 0 < val < 1:
        raise CollapseLabError(f"--dataset-option val_fraction={val:g} must be between 0 and 1 (e.g. 0.1)")
    try:
        return validation_split(read(), val)
    except ValueError as e:
        raise CollapseLabError(f"--dataset-option {e}") from None


_LOADED: dict[tuple, Dataset] = {}


def read_dataset(name: str, data_root=None, download: bool = False, image_size=None, **options) -> Dataset:
    """A data set as its loader reads it (``load_dataset``), once per process for the same
    arguments: the one path by which training, the resolver and the analyses read data."""
    key = (name, str(data_root), download, image_size, json.dumps(options, sort_keys=True, default=str), "raw")
    if key not in _LOADED:
        _LOADED[key] = load_dataset(name, data_root=data_root, download=download, image_size=image_size, **options)
    return _LOADED[key]


def dataset_of(cfg) -> Dataset:
    """A run's data set (``cfg`` a ``RunConfig``), read once per process (``read_dataset``)
    and normalised as the run records: the resolver reads its class count and domains,
    ``prepare`` trains on the same object."""
    from .normalize import apply

    norm = getattr(cfg, "normalize", "dataset")
    key = (cfg.dataset, str(cfg.data_root), cfg.download, cfg.image_size,
           json.dumps(cfg.dataset_options, sort_keys=True, default=str), norm)
    if key not in _LOADED:
        _LOADED[key] = apply(read_dataset(cfg.dataset, cfg.data_root, cfg.download, cfg.image_size,
                                          **cfg.dataset_options), norm)
    if getattr(cfg, "smoke", False):  # a smoke run: the whole split (it must hold), a small test set
        skey = (*key, "smoke")
        if skey not in _LOADED:
            _LOADED[skey] = stratified_subset(_LOADED[key], None, SMOKE_TEST)
        return _LOADED[skey]
    return _LOADED[key]


# A smoke run (``figures/tables --smoke``) splits the whole training set as the real run
# does (a split's constraints must hold), trains each client on at most ``SMOKE_SAMPLES`` of
# its samples (one step), and evaluates on about ``SMOKE_TEST`` test samples: every layer
# runs, on a CPU, in a few seconds a run. Evaluation was most of a smoke run's time (100
# images a class-stratified set grew to 200 on TinyImageNet and 2,070 on DomainNet), hence
# the strict cap; 4 samples still give BatchNorm and the correlation matrix a real batch.
SMOKE_SAMPLES = 4
SMOKE_TEST = 32


__all__ = ["DATASETS", "Dataset", "dataset_of", "load_dataset", "read_dataset"]
