"""An entry's runs in the store, grouped: the seeds of one configuration form a group,
groups are told apart by the fields that differ between them (their legend label)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config import RunConfig, alpha_str
from ..errors import CollapseLabError
from ..store import RunDir, run_path
from .catalogue import Entry, matches

PRETTY_METHOD = {"fedavg+etf": "FedAvg + ETF", "fedavg+etf+gmv": "FedAvg + ETF + GMV", "fedavg": "FedAvg", "fedavgm": "FedAvgM", "fedprox": "FedProx", "moon": "MOON", "scaffold": "SCAFFOLD",
                 "fednova": "FedNova", "fedbn": "FedBN", "fedetf": "FedETF"}
PRETTY_REG = {"none": "", "feddecorr": "FedDecorr", "decov": "DeCov", "structured-decov": "Structured DeCov",
              "feduv": "FedUV"}


@dataclass
class Group:
    key: dict  # field -> value, for the fields that differ between the entry's groups
    configs: list[RunConfig]
    runs: list[RunDir]

    @property
    def label(self) -> str:
        return label(self.key)

    def get(self, field: str):
        return field_value(self.configs[0], field)


def field_value(cfg: RunConfig, field: str):
    return alpha_str(cfg.alpha) if field == "alpha" else getattr(cfg, field)


def label(key: dict) -> str:
    """A legend label in the papers' words: FedAvg / +FedDecorr, alpha = 0.05, M = 2, ..."""
    parts = []
    method, reg = key.get("method"), key.get("reg")
    opts = key.get("method_options")
    if method == "fedetf" and isinstance(opts, dict):  # FedETF Fig. 5's names for its parts
        method = "fedavg+etf" if float(opts.get("gmv_weight", 0.5)) == 0 else "fedavg+etf+gmv"
    if method is not None or reg is not None:
        name = PRETTY_METHOD.get(method, method) if method is not None else ""
        if reg not in (None, "none"):
            name = f"{name} + {PRETTY_REG.get(reg, reg)}" if name else f"+{PRETTY_REG.get(reg, reg)}"
        elif not name:
            name = "FedAvg" if reg == "none" else ""
        parts.append(name)
    for k, v in key.items():
        if k in ("method", "reg", "method_options") or isinstance(v, dict):
            continue
        if k == "alpha":
            parts.append("α = ∞" if v == "inf" else f"α = {v}")
        elif k == "classes_per_client":
            parts.append(f"M = {v}")
        elif k == "beta":
            parts.append(f"β = {v:g}")
        elif k == "decorr_norm":
            parts.append(f"{v} scaling")
        else:
            parts.append(f"{k} = {v}")
    return ", ".join(p for p in parts if p) or "run"


def panel_labels(gs: list[Group]) -> list[str]:
    """Legend labels within one panel: only the fields that differ between its groups
    (the panel's title says the rest); a lone group gets its full label."""
    if len(gs) < 2:
        return [g.label for g in gs]
    fields = [k for k in gs[0].key if len({repr(g.key.get(k)) for g in gs}) > 1]
    if "method_options" in fields and "method" not in fields:
        fields.append("method")  # FedETF's parts are named by method and options together
    return [label({k: v for k, v in g.key.items() if k in fields}) for g in gs]


def groups(entry: Entry, preset: str, store: Path, where: dict | None = None,
           configs: list[RunConfig] | None = None) -> list[Group]:
    """The entry's runs (those matching ``where``), complete in the store, in groups of seeds.
    A missing or unfinished run is an error naming it (``figures`` trains them first)."""
    configs = configs if configs is not None else entry.configs(preset)
    everyone = configs
    configs = [c for c in configs if matches(c, where or {})]
    if not configs:
        raise CollapseLabError(f"{entry.name}: no run of the {preset} preset matches {where}")
    varying = _varying(everyone)
    out: dict[str, Group] = {}
    for cfg in configs:
        path = run_path(store, cfg)
        run = RunDir(path)
        if not (path / "run.json").is_file() or run.meta.get("status") != "complete":
            status = run.meta.get("status") if (path / "run.json").is_file() else "missing"
            raise CollapseLabError(f"{entry.name}: run {path.name} is {status} in {store}; "
                                   f"`collapse-lab figures {entry.name} --preset {preset}` trains it")
        key = {f: field_value(cfg, f) for f in varying}
        name = repr(sorted(key.items()))
        out.setdefault(name, Group(key, [], []))
        out[name].configs.append(cfg)
        out[name].runs.append(run)
    return list(out.values())


def _varying(configs: list[RunConfig]) -> list[str]:
    """Identity fields (not seed, rounds, tag) with more than one value among the configs."""
    ids = [c.identity() for c in configs]
    fields = [k for k in ids[0] if k not in ("seed", "rounds", "tag")]
    return [k for k in fields if len({repr(i.get(k)) for i in ids}) > 1]
