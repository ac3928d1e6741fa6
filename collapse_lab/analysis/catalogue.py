"""The catalogue's specs (``specs/*.yaml``): loading, checking, and the runs an entry needs."""
from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..config import RunConfig, alpha_str, parse_alpha, smoke_of
from ..analyses import SPECS  # the catalogue data: the top-level analyses/ folder
from ..errors import CollapseLabError

PRESETS = ("quick", "cpu", "paper")  # cpu: real CIFAR-10 on a laptop, for the entries that have it
KINDS = ("figure", "table")
KEYS = {"name", "paper", "source", "kind", "caption", "renderer", "runs", "params", "claims", "differs", "unstated",
        "not_rendered"}


@dataclass(frozen=True)
class Entry:
    name: str
    paper: str
    source: str
    kind: str
    caption: str
    renderer: str
    runs: dict  # preset -> sweep spec (base, grid, seeds); empty for entries that train nothing
    params: dict = field(default_factory=dict)
    claims: list = field(default_factory=list)
    differs: list = field(default_factory=list)  # how the quick (or "cpu: ...") form differs from the paper's
    unstated: list = field(default_factory=list)  # settings the paper does not state (our assumption)
    not_rendered: str = ""  # why a figure is not drawn (a schematic): said by --list

    def configs(self, preset: str, warn=None, smoke: bool = False, data_root: str | None = None,
                precision: str | None = None, overrides: dict | None = None) -> list[RunConfig]:
        """The entry's runs at ``preset``, through the sweep's expansion (train's resolver);
        with ``smoke`` their smoke forms (``config.smoke_of``); ``data_root`` and ``precision``:
        the command's (a spec's own ``precision`` wins); ``overrides``: ``--set`` (they win over
        the spec's base; ``commands.overrides``)."""
        spec = self.runs.get(preset)
        if not spec:
            return []
        if precision is not None:
            spec = {**spec, "base": {"precision": precision, **(spec.get("base") or {})}}
        if overrides:
            spec = with_overrides(self.name, preset, spec, overrides)
        # The resolver (through the sweep's expansion) loads the training plugins for their
        # defaults: imported here, when an entry's runs are named, not when the catalogue is read.
        from ..sweep.spec import expand

        # the data-dependent values where the data are here; a run whose data are not is missing anyway
        where = f"analyses/specs/{self.name}.yaml runs.{preset}"
        try:
            configs = expand(spec, where, warn, data="if-present", data_root=data_root)
        except CollapseLabError as e:
            if not overrides:
                raise
            raise CollapseLabError(f"--set with {self.name} at --preset {preset}: {e}") from None
        return smoke_all(configs, self.reads_clients()) if smoke else configs

    def at(self, preset: str) -> "Entry":
        """The entry with its parameters at ``preset``: ``params.presets.<preset>`` (e.g. panels
        whose ``where`` names the paper's data sets) replaces the keys it names."""
        over = (self.params.get("presets") or {}).get(preset) or {}
        base = {k: v for k, v in self.params.items() if k != "presets"}
        return dataclasses.replace(self, params={**base, **over})

    def differs_at(self, preset: str) -> list[str]:
        """What the runs at ``preset`` change from the paper's (said under the figure): none
        at paper; at cpu the lines that start ``cpu:``; at quick the others."""
        if preset == "paper":
            return []
        others = tuple(f"{p}:" for p in PRESETS if p != preset)
        return [d for d in self.differs if not d.startswith(others)]

    def keeps(self) -> tuple[str, str]:
        """What the entry's runs must keep, as (--keep-global, --keep-local): the rounds and
        clients its renderer and claims read. Every renderer reads a run's metrics and the
        last round's models unless a panel names a ``round`` (then every global model);
        client models only where it reads local models."""
        params = [self.params, *(self.params.get("presets") or {}).values()]
        panels = [p for ps in params for p in (ps.get("panels") or []) if isinstance(p, dict)]
        rounds = any("round" in d for d in (*params, *panels))
        return ("all" if rounds else "last"), ("last" if self.reads_clients() else "none")

    def reads_clients(self) -> bool:
        """Whether the entry reads client models (local spectra), so its runs keep them."""
        panels = [p for params in (self.params, *(self.params.get("presets") or {}).values())
                  for p in (params.get("panels") or [])]
        return self.renderer == "local_global" or any(isinstance(p, dict) and p.get("model") == "client" for p in panels)


def with_overrides(name: str, preset: str, spec: dict, overrides: dict) -> dict:
    """The spec with ``--set``'s overrides in its base (a mapping merged key by key); a key
    the entry varies across its runs (a grid axis, a combo's key) is refused: one value for
    all of them would merge its runs."""
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
        key = json.dumps({k: v for k, v in c.identity().items() if k != "seed"}, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            out.append(smoke_of(c, keep_clients))
    return out


def load_entry(path: Path) -> Entry:
    try:
        # libyaml's loader when PyYAML has it: the specs are 4 MB of YAML, 10x faster to read
        d = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as e:
        raise CollapseLabError(f"{path}: not valid YAML ({str(e).splitlines()[0]})") from None
    where = f"analyses/specs/{path.name}"
    if not isinstance(d, dict):
        raise CollapseLabError(f"{where}: a spec is a mapping")
    unknown = sorted(set(d) - KEYS)
    if unknown:
        raise CollapseLabError(f"{where}: unknown key {unknown[0]!r}; a spec has {', '.join(sorted(KEYS))}")
    for k in ("name", "paper", "source", "kind", "caption", "renderer"):
        if not isinstance(d.get(k), str) or not d[k]:
            raise CollapseLabError(f"{where}: {k} must be a non-empty text")
    if d["name"] != path.stem:
        raise CollapseLabError(f"{where}: name {d['name']!r} differs from the file's stem")
    if d["kind"] not in KINDS:
        raise CollapseLabError(f"{where}: kind must be one of {KINDS}")
    runs = d.get("runs") or {}
    if not isinstance(runs, dict) or set(runs) - set(PRESETS):
        raise CollapseLabError(f"{where}: runs must map presets {PRESETS} to sweep specs")
    claims = d.get("claims") or []
    for c in claims:
        if not isinstance(c, dict) or "check" not in c or "text" not in c:
            raise CollapseLabError(f"{where}: each claim needs a check and a text")
    for k in ("differs", "unstated"):  # a line with ": " in it is YAML's mapping, not text
        bad = next((x for x in d.get(k) or [] if not isinstance(x, str)), None)
        if bad is not None or not isinstance(d.get(k) or [], list):
            raise CollapseLabError(f"{where}: {k} must be a list of texts (quote a line that holds ': '); "
                                   f"got {bad if bad is not None else d.get(k)!r}")
    params = d.get("params") or {}
    if d["kind"] == "table":  # rows x columns: the cells and the runs derived (each run stated once)
        from .table_spec import with_derived

        runs, params = with_derived(runs, params, where)
    return Entry(d["name"], d["paper"], d["source"], d["kind"], d["caption"], d["renderer"], runs,
                 params, claims, d.get("differs") or [], d.get("unstated") or [],
                 d.get("not_rendered") or "")


def catalogue(kind: str | None = None) -> list[Entry]:
    """Every entry, in the papers' order (the file names sort that way within a paper)."""
    entries = [load_entry(p) for p in sorted(SPECS.glob("*.yaml"), key=_order)]
    return [e for e in entries if kind is None or e.kind == kind]


def _order(p: Path):
    paper_rank = {"feddecorr": 0, "journal": 1, "fednc": 2, "feduv": 3}
    head, _, tail = p.stem.partition("-")
    num = "".join(ch for ch in tail if ch.isdigit())
    return paper_rank.get(head, 9), tail.rstrip("0123456789"), int(num) if num else 0, tail


def pick(names: tuple[str, ...], kind: str) -> list[Entry]:
    """The named entries of this kind (all when none is named); an unknown name lists the known."""
    entries = catalogue(kind)
    if not names:
        return entries
    by_name = {e.name: e for e in entries}
    out = []
    for n in names:
        if n not in by_name:
            raise CollapseLabError(f"unknown {kind} {n!r}; choose from: {', '.join(by_name)}")
        out.append(by_name[n])
    return out


def matches(cfg: RunConfig, where: dict) -> bool:
    """Whether a run configuration has the values in ``where`` (alpha as train writes it)."""
    for k, v in where.items():
        have = getattr(cfg, k) if hasattr(cfg, k) else cfg.identity().get(k)  # decorr_norm: config.MOVED_REG_OPTIONS
        if k == "alpha":
            if alpha_str(cfg.alpha) != alpha_str(parse_alpha(v)):
                return False
        elif isinstance(have, float) or isinstance(v, float):
            if not math.isclose(float(have), float(v), rel_tol=1e-12):
                return False
        elif str(have) != str(v):
            return False
    return True
