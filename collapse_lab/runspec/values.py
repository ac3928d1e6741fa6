"""The values of a run's options: their types (``coerce``), ``KEY=VALUE`` items (every
option that takes them reads them here) and their ranges (``check_values``), each refusal
one line naming the option."""
from __future__ import annotations

import dataclasses
import json
import math

from ..config import RunConfig
from ..errors import CollapseLabError


def parse_key_values(items, flag: str, example: str) -> dict:
    """``KEY=VALUE`` items (values read as JSON where they parse, else text); a key given
    twice and a number that is not finite (``1e999``, ``NaN``) are refused in one line."""
    out = {}
    for item in items:
        if "=" not in item:
            raise CollapseLabError(f"{flag} {item!r}: write KEY=VALUE, e.g. {example}")
        k, v = item.split("=", 1)
        key = k.replace("-", "_")
        if key in out:
            raise CollapseLabError(f"{flag} {k} is given twice ({k}={out[key]!r} and {item!r}); give it once")
        try:
            out[key] = json.loads(v)
        except json.JSONDecodeError:
            out[key] = v
        if isinstance(out[key], float) and not math.isfinite(out[key]):
            raise CollapseLabError(f"{flag} {item!r}: {v} is not a finite number; give a finite number")
    return out


# RunConfig fields by the type a value must have (config files arrive untyped)
INT_FIELDS = ("min_size", "clients", "rounds", "local_epochs", "batch_size", "seed", "eval_batch_size",
              "parallel_clients", "image_size", "classes_per_client", "probe")
FLOAT_FIELDS = ("sample_fraction", "beta", "lr", "momentum", "weight_decay")
BOOL_FIELDS = ("download", "channels_last", "local_eval", "probe_layers")
DICT_FIELDS = ("method_options", "reg_options", "dataset_options", "partition_options")


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def coerce(name: str, value, where: str = ""):
    """A config value as its field's type; a wrong type is one line naming the option."""

    def bad(what: str):
        return CollapseLabError(f"{where}{flag(name)} {value!r} {what}")

    if value is None and name == "image_size":
        return None
    if name in INT_FIELDS:
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or (isinstance(value, float) and (not math.isfinite(value) or value != int(value)))):
            raise bad("is not a whole number")
        return int(value)
    if name in FLOAT_FIELDS:
        if value is None and name == "beta":
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad("is not a number")
        if not math.isfinite(value):
            raise bad("is not finite; give a finite number")
        return float(value)
    if name in BOOL_FIELDS:
        if not isinstance(value, bool):
            raise bad("is not true or false")
        return value
    if name in DICT_FIELDS:
        if not isinstance(value, dict):
            raise bad("is not a mapping of option names to values")
        return value
    if not isinstance(value, str):
        raise bad("is not a string")
    return value


LIMITS = {"rounds": 1_000_000, "local_epochs": 100_000, "clients": 10_000_000, "batch_size": 10_000_000,
          "seed": 2**63 - 1, "image_size": 10_000, "classes_per_client": 1_000_000, "parallel_clients": 4096}


def no_negative_zero(cfg: RunConfig) -> RunConfig:
    """-0.0 is 0.0: it must not name a second folder for the same training."""
    def fix(v):
        if isinstance(v, float) and v == 0.0:
            return 0.0
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        if isinstance(v, list):
            return [fix(x) for x in v]
        return v

    changes = {f: fix(getattr(cfg, f)) for f in (*FLOAT_FIELDS, *DICT_FIELDS)}
    changes = {f: v for f, v in changes.items() if repr(v) != repr(getattr(cfg, f))}
    return dataclasses.replace(cfg, **changes) if changes else cfg


def check_values(cfg: RunConfig) -> None:
    """The numbers of a configuration in their ranges (one line naming the option)."""
    if cfg.clients == 0 and cfg.partition != "domain":  # 0: one client per domain, counted when the data loads
        raise CollapseLabError("--clients 0 means one client per domain, which only --partition domain has; give 1 or "
                               "more")
    if cfg.clients < 0:
        raise CollapseLabError(f"--clients must be >= 1 (got {cfg.clients})")
    if not 0 < cfg.sample_fraction <= 1:
        raise CollapseLabError(f"--sample-fraction must be in (0, 1] (got {cfg.sample_fraction})")
    for name, v, lo in (("--rounds", cfg.rounds, 1), ("--local-epochs", cfg.local_epochs, 1),
                        ("--batch-size", cfg.batch_size, 1), ("--min-size", cfg.min_size, 0)):
        if v < lo:
            raise CollapseLabError(f"{name} must be >= {lo} (got {v})")
    for name in INT_FIELDS:  # beyond these nothing trains in a lifetime; a typo would hang the planner
        v = getattr(cfg, name)
        if v is not None and abs(v) > LIMITS.get(name, 10**9):
            raise CollapseLabError(f"{flag(name)} {v} is too large (at most {LIMITS.get(name, 10**9):,}); "
                                   "check the number")

    for name in FLOAT_FIELDS:
        v = getattr(cfg, name)
        if not math.isfinite(v):
            raise CollapseLabError(f"{flag(name)} {v} is not finite; give a finite number")
    if not cfg.lr > 0:
        raise CollapseLabError(f"--lr must be > 0 (got {cfg.lr})")
    if not 0 <= cfg.momentum < 1:
        raise CollapseLabError(f"--momentum must be in [0, 1) (got {cfg.momentum}); heavy-ball momentum >= 1 diverges")
    for name in ("weight_decay", "beta"):
        if getattr(cfg, name) < 0:
            raise CollapseLabError(f"{flag(name)} must be >= 0 (got {getattr(cfg, name)})")
    if cfg.seed < 0:
        raise CollapseLabError(f"--seed must be >= 0 (got {cfg.seed})")
    if cfg.image_size is not None and cfg.image_size < 1:
        raise CollapseLabError(f"--image-size must be >= 1 (got {cfg.image_size})")
    if cfg.probe < 0:
        raise CollapseLabError(f"--probe must be >= 0 (got {cfg.probe}; 0: no probe)")
    if cfg.probe_layers and cfg.probe == 0:
        raise CollapseLabError("--probe-layers reads the layers on the --probe set, which --probe 0 turns off; "
                               "give --probe N (1000 by default)")
    if cfg.parallel_clients < 0:
        raise CollapseLabError(f"--parallel-clients must be >= 0 (got {cfg.parallel_clients}; 0: automatic)")
    if cfg.eval_batch_size < 1:
        raise CollapseLabError(f"--eval-batch-size must be >= 1 (got {cfg.eval_batch_size})")
