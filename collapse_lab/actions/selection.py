"""What the actions share: where they say things by default (stderr: stdout stays for
numbers), the runs an analysis reads (a store, ``--run`` folders and the filters:
``analysis.select``) and the source of their representations."""
from __future__ import annotations

import sys
from pathlib import Path


def say_stderr(msg: str) -> None:
    print(msg, file=sys.stderr)


def warn_stderr(msg: str) -> None:
    print(f"warning: {msg}", file=sys.stderr)


def runs_of(store, alpha=(), runs=(), dataset=None, model=None, regs=(), methods=(), one_round=False,
            warn=warn_stderr) -> list:
    """The selected runs (``RunDir``): ``runs`` folders, else the store's runs that match the
    filters (``one_round``: the analysis reads one round the user named, or each run alone)."""
    from ..analysis import select

    return select.select_runs(Path(store), tuple(alpha), tuple(runs), dataset, model, tuple(regs), tuple(methods),
                              warn=warn, one_round=one_round)


def iid_twins(store, selected, alpha=(), runs=(), dataset=None, model=None, regs=(), methods=()) -> list:
    """The store's IID runs of the selected runs' settings, read beside them as the reference."""
    from ..analysis.select import iid_reference

    return iid_reference(Path(store), selected, tuple(alpha), tuple(runs), dataset, model, tuple(regs), tuple(methods))


def features_of(data_root=None, model_factory=None, layer=None, **options):
    """The ``FeatureSource`` of an analysis: split, dtype and device, the data root (checked),
    and for a model from elsewhere its factory and representation layer."""
    from ..analysis.features import FeatureSource
    from ..data_root import check_data_root

    return FeatureSource(**options, data_root=None if data_root is None else check_data_root(data_root),
                         model_factory=model_factory, layer=layer)
