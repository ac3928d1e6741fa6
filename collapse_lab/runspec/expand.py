"""Sweep specs: base options x grid axes x seeds -> run configurations.

A spec is a YAML or TOML (or JSON) mapping::

    base:                 # any train option, as in a --config file
      dataset: digits
      rounds: 10
    grid:                 # axes: option -> list of values; every combination is a run
      alpha: [0.05, inf]
      combo:              # an axis whose values are several options at once (more such
                          # axes: combo_<anything>, crossed with each other)
        - {method: fedavg, reg: none}
        - {method: moon, reg: feddecorr, beta: 0.1}
    seeds: [0, 1, 2]

Every point goes through the same resolver as ``collapse-lab train`` (``resolve_runs``),
so a sweep's run is ``train``'s run of the same options, folder name included. Options
that change only speed or where things go (device, --parallel-clients, --keep-local,
...) may sit in ``base`` but not on an axis: the points would be one run.
"""
from __future__ import annotations

import itertools
import json
from pathlib import Path

from ..config import SPEED_ONLY, RunConfig
from ..errors import CollapseLabError
from .resolve import resolve_runs

TOP_KEYS = ("base", "grid", "seeds", "slurm")  # slurm: the SLURM options of --backend slurm
COMBO = "combo"


def precision_open(spec: dict) -> bool:
    """Whether the spec leaves every point's precision to ``auto`` (none of base, the grid's
    axes or its combos names fp32 or bf16)."""
    grid = spec.get("grid") or {}
    named = [(spec.get("base") or {}).get("precision"), *grid.get("precision", [])]
    named += [v.get("precision") for k, vs in grid.items() if k.startswith(COMBO) for v in vs if isinstance(v, dict)]
    return all(v in (None, "auto") for v in named)


def load_spec(path: str | Path) -> dict:
    from ..config_files import load_mapping

    p = Path(path)
    spec = load_mapping(p, "sweep spec")
    unknown = sorted(set(spec) - set(TOP_KEYS))
    if unknown:
        raise CollapseLabError(f"sweep spec {p}: unknown key {unknown[0]!r}; a spec has {', '.join(TOP_KEYS)}")
    return spec


MAX_RUNS = 10_000


def count_points(spec: dict) -> int:
    """The grid's size before it is expanded (axes x seeds x base alphas): a typo must not
    hang the planner."""
    n = len(spec.get("seeds") or [0]) if isinstance(spec.get("seeds", [0]), list) else 1
    for values in (spec.get("grid") or {}).values():
        n *= len(values) if isinstance(values, list) else 1
    base = spec.get("base") or {}
    for key in ("alphas", "alpha", "classes_per_client", "classes-per-client"):
        if isinstance(base, dict) and isinstance(base.get(key), list):
            n *= max(1, len(base[key]))
    return n


def points(spec: dict, where: str) -> list[dict]:
    """The grid's points as option mappings (base, then the axes' values, then the seed)."""
    base = spec.get("base") or {}
    grid = spec.get("grid") or {}
    seeds = spec.get("seeds", [0])
    for name, v in (("base", base), ("grid", grid)):
        if not isinstance(v, dict):
            raise CollapseLabError(f"{where}: {name} must be a mapping of option names to values")
    if not isinstance(seeds, list) or not seeds:
        raise CollapseLabError(f"{where}: seeds must be a non-empty list of whole numbers")
    if not base and not grid:
        raise CollapseLabError(f"{where} has neither base options nor a grid; write the runs it should train "
                               "(a spec is not a way to run train's defaults)")
    axes = []
    for name, values in grid.items():
        key = name.replace("-", "_")
        if not isinstance(values, list) or not values:
            raise CollapseLabError(f"{where}: grid.{name} must be a non-empty list of values")
        if key == COMBO or key.startswith(COMBO + "_"):
            if not all(isinstance(v, dict) and v for v in values):
                raise CollapseLabError(f"{where}: grid.combo must be a list of option mappings")
            options = [{k.replace("-", "_"): x for k, x in v.items()} for v in values]
        else:
            options = [{key: v} for v in values]
        for opt in options:
            fixed = sorted(set(opt) & (set(SPEED_ONLY) | {"seed", "seeds", "alphas", "tag"}))
            if fixed:
                raise CollapseLabError(f"{where}: grid.{name} varies {fixed[0]}, which cannot vary in a sweep (it does not "
                                       "change what a run computes, or has its own key); put it in base or seeds")
        axes.append(options)
    out = []
    for combo in itertools.product(*axes) if axes else [()]:
        merged = dict(base)
        for opt in combo:
            merged.update(opt)
        for seed in seeds:
            out.append({**merged, "seed": seed})
    return out


def expand(spec: dict, where: str, warn=None, max_runs: int = MAX_RUNS, distinct: bool = False,
           data: str = "require", data_root: str | None = None, max_option: str | None = "--max-runs") -> list[RunConfig]:
    """The spec's run configurations, each resolved and checked as ``train`` would; the
    same configuration reached twice is one run. An option the grid crosses with a
    combination where it has no effect (alpha with a pathological partition, beta with no
    regularizer) is reset there and reported once to ``warn``; in ``base`` it is an error.
    ``distinct`` (a user's sweep): two points that are one run are an error, not merged
    silently (an axis the folder name does not see, such as rounds, or a value spelled twice).
    ``data_root``: the command's ``--data-root`` (``resolve_runs``)."""
    n = count_points(spec)
    if n > max_runs:
        raise CollapseLabError(f"{where}: the grid has {n:,} points, more than {max_runs:,}; split the spec"
                               + (f", or raise {max_option} if you mean it" if max_option else ""))
    configs, seen, fired = [], {}, {}  # fired: message -> points where it was reset
    pts = points(spec, where)
    for i, point in enumerate(pts):
        label = json.dumps({k: v for k, v in point.items() if k not in (spec.get("base") or {})}, sort_keys=True)
        reset_before = sum(len(v) for v in fired.values())
        for cfg in resolve_runs({}, values=point, where=f"{where} (point {label})", data=data, data_root=data_root,
                                carried=lambda msg, i=i: fired.setdefault(msg, set()).add(i)):
            key = cfg.run_name()
            if key not in seen:
                seen[key] = (label, cfg, i)
                configs.append(cfg)
                continue
            if not distinct:  # the catalogue: one run may serve several cells
                continue
            first_label, first, j = seen[key]
            reset = sum(len(v) for v in fired.values()) > reset_before or any(j in v for v in fired.values())
            if first.identity() != cfg.identity():  # e.g. rounds: one folder, the longer run extends the shorter
                diff = sorted(k for k, v in cfg.identity().items() if first.identity().get(k) != v)
                raise CollapseLabError(f"{where}: points {first_label} and {label} would share one run folder "
                                       f"(they differ only in {', '.join(diff)}, which does not name a run); put "
                                       f"{diff[0]} in base, or give the points a tag")
            if not reset:
                raise CollapseLabError(f"{where}: points {first_label} and {label} are the same run (the values "
                                       "differ only in spelling or in what the resolver fills in); drop one")
    for msg, where_fired in fired.items():
        name = msg.split()[0].lstrip("-").replace("-", "_")
        name = {"reg_option": "reg_options"}.get(name, name)  # the flag is singular, the field plural
        having = {i for i, p in enumerate(pts) if name in p or (name == "alpha" and "alphas" in p)}
        if where_fired >= having:  # moot in every point that sets it: the spec is wrong, not the grid
            raise CollapseLabError(f"{where}: {msg.split('; left')[0]} in every point of the grid; drop it")
        if warn is not None:
            warn(f"{msg} ({len(where_fired)} of {len(having)} points)")
    return configs


def precision_line(configs, auto: bool) -> str:
    """The precision a command's runs train in, for its first line: e.g. ``fp32 (auto: bf16
    on CUDA, fp32 on a CPU)`` or ``bf16 (--precision bf16)``."""
    got = "+".join(sorted({c.precision for c in configs})) or "none (no runs)"
    return f"{got} (auto: bf16 on CUDA, fp32 on a CPU)" if auto else f"{got} (--precision {got})"
