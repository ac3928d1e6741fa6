"""The catalogue's specs (``specs/*.yaml``): loading, checking, and the runs an entry needs."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..config import RunConfig
try:  # the catalogue's data, the top-level analyses/ (read here only), as installed
    from ..analyses import LADDERS, REFERENCE, SPECS  # noqa: F401
except ModuleNotFoundError:  # a checkout on PYTHONPATH, not installed (a GPU machine without network)
    _DATA = Path(__file__).resolve().parents[2] / "analyses"
    SPECS, REFERENCE, LADDERS = _DATA / "specs", _DATA / "reference", _DATA / "ladder"
from ..errors import CollapseLabError

def reference_file(name: str) -> Path:
    """One of the papers' printed-number files (``analyses/reference/``)."""
    return REFERENCE / name


CLIENT_RENDERERS = ("local_global", "methods")  # renderers that read client 0's local model
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
        return self.renderer in CLIENT_RENDERERS or any(isinstance(p, dict) and p.get("model") == "client" for p in panels)


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
    if names and all(Path(n).name == n and not n.startswith(".") and (SPECS / f"{n}.yaml").is_file() for n in names):
        out = [load_entry(SPECS / f"{n}.yaml") for n in names]  # read only the named specs
        if all(e.kind == kind for e in out):
            return out
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
    """Whether a run configuration has the values in ``where`` (the one run filter, ``where``)."""
    from ..where import value_matches

    # decorr_norm and the other moved fields live in the identity (config.MOVED_REG_OPTIONS)
    return all(value_matches(getattr(cfg, k) if hasattr(cfg, k) else cfg.identity().get(k), v, k)
               for k, v in where.items())


def unknown_metrics(entry: Entry) -> list[str]:
    """The metric names the entry's claims read that its renderer does not write (a typo,
    or a measure renamed): ``check_specs`` refuses them."""
    from . import RENDERERS

    have = set(RENDERERS.get(entry.renderer).metrics)
    named = []
    for c in entry.claims:
        for k in ("metric", "other", "times_metric"):
            v = c.get(k)
            named += [str(x) for x in (v.values() if isinstance(v, dict) else [v])] if v is not None else []
    return sorted({m for m in named if m not in have})
