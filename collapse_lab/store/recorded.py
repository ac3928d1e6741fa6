"""What a run trained outside collapse-lab records (``RunWriter``, ``import``): its
configuration under train's option names, checked as ``train`` checks them, with null for
the training settings it does not state (never collapse-lab's defaults); and its metrics and
notes as plain JSON."""
from __future__ import annotations

import math

import numpy as np
import torch

from ..config import RunConfig
from ..errors import CollapseLabError

RUN_FIELDS = {f for f in RunConfig.__dataclass_fields__}
# What a loop outside collapse-lab trained with, when its writer does not say: recorded as
# null ("not recorded"), never as collapse-lab's defaults. What a recording does not name is
# unknown too (``run_config``): the partition (unless an alpha implies Dirichlet), its classes
# per client (unless it is one that has them), the weight of a regularizer that was not used.
UNSTATED = ("lr", "momentum", "weight_decay", "local_epochs", "batch_size", "seed", "augment", "eval_batch_size")
# the training settings a writer records, checked as train checks them: (type, lowest value)
SETTINGS = {"lr": (float, 0), "momentum": (float, 0), "weight_decay": (float, 0), "beta": (float, 0),
            "local_epochs": (int, 1), "batch_size": (int, 1), "seed": (int, 0)}


def whole(v) -> bool:
    """An int (numpy's too), never a bool or a float that happens to be whole."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def json_value(v, where: str):
    """``v`` as plain JSON: numbers, text, lists and dicts; a one-element tensor or array and
    numpy scalars become numbers; anything else is refused in one line."""
    if isinstance(v, (torch.Tensor, np.ndarray)):
        if v.size == 1 if isinstance(v, np.ndarray) else v.numel() == 1:
            return json_value(v.item(), where)
        raise CollapseLabError(f"{where}: a tensor of {tuple(v.shape)} values is not a number; give a number "
                               "(tensor.item()) or a list")
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):  # NaN/Infinity are not JSON
        raise CollapseLabError(f"{where}: {v} is not a finite number; give a finite number, or None for a value "
                               "not measured")
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        return [json_value(x, f"{where}[{i}]") for i, x in enumerate(v)]
    if isinstance(v, dict):
        if not all(isinstance(k, str) for k in v):
            raise CollapseLabError(f"{where}: metric names must be text")
        return {k: json_value(x, f"{where}.{k}") for k, x in v.items()}
    raise CollapseLabError(f"{where}: {type(v).__name__} is not a number, text, list or dict; convert it first")


def _check_settings(given: dict, flags: dict) -> None:
    """``train``'s checks of the training settings a writer records (finite, in range)."""
    for k, v in given.items():
        where = flags.get(k, f"RunWriter config: {k}")
        if k in SETTINGS and v is not None:
            kind, low = SETTINGS[k]
            ok = (whole(v) if kind is int else isinstance(v, (int, float)) and not isinstance(v, bool))
            rng = {"lr": "> 0", "momentum": "in [0, 1)"}.get(k, f">= {low}")
            if not ok or not math.isfinite(float(v)) or v < low or (k == "lr" and v == 0) or (k == "momentum" and v >= 1):
                raise CollapseLabError(f"{where} {v!r}: give a finite {'whole ' if kind is int else ''}number {rng}")


def run_config(config: dict, normalize=None, data_root=None, flags: dict | None = None) -> RunConfig:
    """The RunConfig a writer records: the options given, a data root and normalisation
    where given, the model's current revision, and null for the training settings not given.
    Values are checked as ``train`` checks them (finite, in range), a tag as ``train --tag``,
    and the normalisation against the data set's channels. ``flags``: how the caller names
    an option in errors (``import``: ``{"normalize": "--normalize", "lr": "--set lr"}``)."""
    from ..data import DATASETS
    from ..data.normalize import canonical, constants
    from ..models import MODELS, revision
    from .paths import check_tag

    flags = flags or {}

    if not isinstance(config, dict):
        raise CollapseLabError("RunWriter config: give a dict of train's option names")
    unknown = sorted(set(config) - RUN_FIELDS)
    if unknown:
        raise CollapseLabError(f"RunWriter config: unknown option(s) {', '.join(map(str, unknown))}; use train's option "
                               "names (put other facts in source=...)")
    given = dict(config)
    if normalize is not None:
        given["normalize"] = normalize
    norm_flag = flags.get("normalize", "RunWriter normalize")
    given["normalize"] = canonical(given.get("normalize", "unknown"), norm_flag)
    if data_root is not None:
        given["data_root"] = str(data_root)
    for k in ("clients", "rounds"):
        if k in given and (not whole(given[k]) or given[k] < 1):
            raise CollapseLabError(f"RunWriter config: {k} {given[k]!r} is not a whole number >= 1")
    check_tag(given.get("tag", ""), flags.get("tag", "RunWriter config tag"))
    _check_settings(given, flags)
    dataset = given.get("dataset", RunConfig.dataset)
    DATASETS.get(dataset)  # an unknown data set: one line listing the known
    shape = DATASETS.info(dataset).get("shape")
    if shape:  # the normalisation must fit the data set's channels (else only an analysis finds out)
        constants(given["normalize"], shape[0] if len(shape) == 3 else 1, norm_flag)
    model = given.get("model", RunConfig.model)
    if "model_revision" not in given and model in MODELS:
        given["model_revision"] = revision(model)  # the network as registered now
    defaults = {**RunConfig().to_json(), "preset": "external", "probe": 0, **{k: None for k in UNSTATED}}
    if "partition" not in given and "alpha" not in given:
        defaults["partition"] = "unknown"
    if given.get("partition", defaults["partition"]) not in ("pathological", "scenes"):
        defaults["classes_per_client"] = None
    if given.get("reg", "none") == "none":
        defaults["beta"] = None
    try:
        return RunConfig.from_json({**defaults, **given})
    except (TypeError, ValueError) as e:
        raise CollapseLabError(f"RunWriter config: {e}") from None
