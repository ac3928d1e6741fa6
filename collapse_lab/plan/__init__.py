"""The catalogue's planning, above both subsystems: which runs an entry needs at a preset
(its spec's sweep through the one resolver, ``runspec``), resolved once per command and
handed to the analysis (``analysis.context.Context.plan``); ``catalogue``
trains the missing ones through the sweep. The analysis reads the runs it is given and
never names runs itself, so rendering from a store loads nothing that trains. What runs
cost is planned here too: ``estimate`` (images x FLOPs at measured rates), ``pilot`` (a short
measured pilot on this machine) and ``sweep_preview`` (a sweep's dry-run)."""
from __future__ import annotations

import json

from ..config import RunConfig, smoke_of
from ..errors import CollapseLabError
from ..runspec.expand import expand


SEEDS = "seeds"  # the override that replaces a spec's seed list (a ladder rung's ``seeds``)


def with_overrides(name: str, preset: str, spec: dict, overrides: dict) -> dict:
    """The spec with ``--set``'s overrides in its base (a mapping merged key by key); a key
    the entry varies across its runs (a grid axis, a combo's key) is refused: one value for
    all of them would merge its runs. ``SEEDS`` (a list of seeds, a ladder rung's ``seeds``)
    replaces the spec's seed list: more seeds of the same runs, never one seed for all."""
    overrides = dict(overrides)
    seeds = overrides.pop(SEEDS, None)
    if seeds is not None:
        if not isinstance(seeds, (list, tuple)) or not seeds or not all(isinstance(x, int) and x >= 0 for x in seeds):
            raise CollapseLabError(f"{name}: seeds must be a non-empty list of seeds (0, 1, ...); got {seeds!r}")
        spec = {**spec, "seeds": sorted(set(seeds))}
    grid = spec.get("grid") or {}
    varied = {k for k in grid if not k.startswith("combo")}
    varied |= {k for c, vs in grid.items() if c.startswith("combo") for v in vs if isinstance(v, dict) for k in v}
    varied |= {"seed"} if len(spec.get("seeds", [0])) > 1 else set()
    clash = sorted(set(overrides) & (varied | {"alphas", "seeds"}))
    if clash:
        raise CollapseLabError(f"--set {clash[0]}: {name} varies {clash[0]} across its runs at --preset {preset}; it "
                               "cannot be set for all of them")
    base = dict(spec.get("base") or {})
    for k, v in overrides.items():
        base[k] = {**(base.get(k) or {}), **v} if isinstance(v, dict) else v
    return {**spec, "base": base}


def smoke_all(configs: list[RunConfig], keep_clients: bool = False) -> list[RunConfig]:
    """The smoke forms of an entry's runs, one seed of each: a smoke run proves the path
    (data format, model, method, regularizer, renderer), which the other seeds would only
    repeat with other random numbers (the CI's catalogue smoke trains a third of the runs)."""
    out, seen = [], set()
    for c in configs:
        key = c.seedless_key()
        if key not in seen:
            seen.add(key)
            out.append(smoke_of(c, keep_clients))
    return out


def entry_runs(entry, preset: str, warn=None, smoke: bool = False, data_root: str | None = None,
               precision: str | None = None, overrides: dict | None = None) -> list[RunConfig]:
    """The entry's runs at ``preset``, through the sweep's expansion (train's resolver);
    with ``smoke`` their smoke forms (``config.smoke_of``); ``data_root`` and ``precision``:
    the command's (a spec's own ``precision`` wins); ``overrides``: ``--set`` (they win over
    the spec's base)."""
    spec = entry.runs.get(preset)
    if not spec:
        return []
    if precision is not None:
        spec = {**spec, "base": {"precision": precision, **(spec.get("base") or {})}}
    if overrides:
        spec = with_overrides(entry.name, preset, spec, overrides)
    # the data-dependent values where the data are here; a run whose data are not is missing anyway
    where = f"analyses/specs/{entry.name}.yaml runs.{preset}"
    try:
        configs = expand(spec, where, warn, data="if-present", data_root=data_root, max_option=None)
    except CollapseLabError as e:
        if not overrides:
            raise
        raise CollapseLabError(f"--set with {entry.name} at --preset {preset}: {e}") from None
    return smoke_all(configs, entry.reads_clients()) if smoke else configs


def cell_runs(entry, preset: str, opts: dict, smoke: bool = False, data_root: str | None = None,
              precision: str | None = None, overrides: dict | None = None) -> list[RunConfig]:
    """A table cell's runs (one per seed): the spec's base and the cell's options, expanded
    as ``entry_runs`` expands an entry's."""
    spec = entry.runs[preset]
    base = {**({"precision": precision} if precision is not None else {}), **(spec.get("base") or {}), **opts}
    cell = {"base": base, "seeds": spec.get("seeds", [0])}
    if overrides:  # --set, as entry_runs applies it
        cell = with_overrides(entry.name, preset, cell, overrides)
    configs = expand(cell, f"analyses/specs/{entry.name}.yaml cell", data="if-present", data_root=data_root,
                     max_option=None)  # the catalogue's commands have no --max-runs
    if len(configs) != len(spec.get("seeds", [0])):  # e.g. no alpha: train's default expands to four
        raise CollapseLabError(f"{entry.name}: a cell's options {opts} give {len(configs)} runs per seed list, not one "
                               "per seed; the spec must pin every option that expands")
    return smoke_all(configs) if smoke else configs


class Plan:
    """The runs of a command's entries at one preset, each entry's (and each table cell's)
    resolved once and kept for the command (``figures`` plans, trains, then renders: one
    resolution serves all three)."""

    def __init__(self, preset: str, smoke: bool = False, data_root: str | None = None,
                 precision: str | None = None, overrides: dict | None = None):
        self.preset, self.smoke, self.data_root = preset, smoke, data_root
        self.precision, self.overrides = precision, dict(overrides or {})
        self._runs: dict = {}

    def runs(self, entry, warn=None, smoke: bool | None = None, overrides: dict | None = None) -> list[RunConfig]:
        """The entry's runs (``entry_runs``) with the plan's settings; ``smoke`` and
        ``overrides`` replace the plan's for this call (``--set`` is checked against the runs
        without it)."""
        smoke = self.smoke if smoke is None else smoke
        over = self.overrides if overrides is None else overrides
        key = ("entry", entry.name, smoke, json.dumps(over, sort_keys=True, default=str))
        if key not in self._runs:
            self._runs[key] = entry_runs(entry, self.preset, warn, smoke, self.data_root, self.precision, over)
        return self._runs[key]

    def with_overrides(self, overrides: dict) -> "Plan":
        """The same plan under other ``--set`` overrides (a ladder's rung), sharing what is
        resolved already."""
        other = Plan(self.preset, self.smoke, self.data_root, self.precision, overrides)
        other._runs = self._runs
        return other

    def cell(self, entry, opts: dict) -> list[RunConfig]:
        """A table cell's runs (``cell_runs``) with the plan's settings."""
        key = ("cell", entry.name, self.smoke, json.dumps([opts, self.overrides], sort_keys=True, default=str))
        if key not in self._runs:
            self._runs[key] = cell_runs(entry, self.preset, opts, self.smoke, self.data_root, self.precision,
                                        self.overrides)
        return self._runs[key]


def context(store, preset: str, smoke: bool = False, data_root: str | None = None, precision: str | None = None,
            overrides: dict | None = None, plan: Plan | None = None, **kw):
    """The analysis's ``Context`` over ``store`` with the runs of ``plan`` (a new one with
    these settings when none is given)."""
    from ..analysis.context import Context

    plan = plan or Plan(preset, smoke, data_root, precision, overrides)
    return Context(store, preset, plan=plan, smoke=smoke, data_root=data_root, precision=precision,
                   overrides=dict(overrides or {}), **kw)
