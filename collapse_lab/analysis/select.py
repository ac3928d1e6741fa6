"""The one run selector: which runs of a store an analysis reads, and how they group.

Two ways in, one grouping: ``select_runs`` takes what a user names (``--run`` folders, or
a store and filters) and ``groups`` takes a catalogue entry's planned configurations; both
end in ``group`` (the seeds of one configuration form a ``Group``; groups are told apart by
the identity fields that differ between them, which also make their legend label)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..config import MOVED_FIELDS, RunConfig, alpha_str, parse_alpha
from ..partition import takes
from ..errors import CollapseLabError, RunMissing
from ..store import RunDir, find_runs, run_path
from .catalogue import Entry, matches
from ..labels import describe, label

# What ``config.smoke_of`` rewrites (a smoke run's panels do not select by them).
SMOKE_CUT = ("rounds", "local_epochs", "min_size", "probe", "keep_local")

# Runs whose identities differ only in these are seeds (or lengths) of one configuration.
SEED_KEYS = ("seed", "rounds", "tag")


@dataclass
class Group:
    key: dict  # field -> value, for the fields that differ between the groups
    configs: list[RunConfig]
    runs: list[RunDir]

    @property
    def label(self) -> str:
        return label(self.key)

    def get(self, field: str):
        return field_value(self.configs[0], field)


def field_value(cfg: RunConfig, field: str):
    """A field as the run's identity shows it (alpha as text; an option that moved into its
    plugin, FedDecorr's ``decorr_norm``, under its old name: ``config.MOVED_REG_OPTIONS``)."""
    if field == "alpha":
        return alpha_str(cfg.alpha)
    return getattr(cfg, field) if hasattr(cfg, field) else cfg.identity()[field]


def varying(configs: list[RunConfig], skip: tuple[str, ...] = SEED_KEYS) -> list[str]:
    """Identity fields (not ``skip``: seed, rounds, tag) with more than one value among the
    configs. A regularizer's option shown as a field of its own (FedDecorr's ``decorr_norm``,
    ``config.MOVED_FIELDS``) counts among the runs of that regularizer only: FedDecorr in the
    released scaling against FedAvg differs in the regularizer, not in a scaling FedAvg lacks."""
    ids = [c.identity() for c in configs]
    fields = [k for k in ids[0] if k not in skip] if ids else []
    return [k for k in fields
            if len({repr(i.get(k)) for i, c in zip(ids, configs) if MOVED_FIELDS.get(k, c.reg) == c.reg}) > 1]


def group(configs: list[RunConfig], runs: list[RunDir], fields: list[str]) -> list[Group]:
    """Runs (with their configurations) in groups of equal ``fields``, in first-seen order."""
    out: dict[str, Group] = {}
    for cfg, run in zip(configs, runs):
        key = {f: field_value(cfg, f) for f in fields}
        g = out.setdefault(repr(sorted(key.items())), Group(key, [], []))
        g.configs.append(cfg)
        g.runs.append(run)
    return list(out.values())


def panel_labels(gs: list[Group]) -> list[str]:
    """Legend labels within one panel: only the fields that differ between its groups
    (the panel's title says the rest); a lone group gets its full label."""
    if len(gs) < 2:
        return [g.label for g in gs]
    fields = [k for k in gs[0].key if len({repr(g.key.get(k)) for g in gs}) > 1]
    if "method_options" in fields and "method" not in fields:
        fields.append("method")  # FedETF's parts are named by method and options together
    return [label({k: v for k, v in g.key.items() if k in fields}) for g in gs]


# -- a catalogue entry's runs -------------------------------------------------------------

def groups(entry: Entry, preset: str, store: Path, where: dict | None, configs: list[RunConfig]) -> list[Group]:
    """The entry's runs (those matching ``where``), complete in the store, in groups of seeds.
    A missing or unfinished run is an error naming it (``figures`` trains them first).
    ``configs``: the entry's runs, as the catalogue's plan named them (``collapse_lab.plan``)."""
    fields = varying(configs)
    if configs and configs[0].smoke:  # a smoke run's length was cut: a panel cannot tell it apart by it
        where = {k: v for k, v in (where or {}).items() if k not in SMOKE_CUT}
    configs = [c for c in configs if matches(c, where or {})]
    if not configs:
        raise CollapseLabError(f"{entry.name}: no run of the {preset} preset matches {where}")
    runs = []
    for cfg in configs:
        path = run_path(store, cfg)
        run = RunDir(path)
        if not run.is_complete():
            status = (f"{run.status} ({run.meta.get('rounds_complete', 0)} of {run.meta.get('rounds')} rounds)"
                      if run.exists() else "missing")
            raise RunMissing(f"{entry.name}: run {path.name} is {status} in {store}")
        done = int(run.meta.get("rounds_complete", 0))
        if done < cfg.rounds:  # a shorter run of the same identity (rounds is not part of a run's name)
            raise RunMissing(f"{entry.name}: run {path.name} holds {done} of the {cfg.rounds} rounds the entry reads in "
                             f"{store}")
        run.read_round = cfg.rounds  # a longer run (extended by another entry or rung) is read where this one ends
        runs.append(run)
    return group(configs, runs, fields)


# -- runs a user names ---------------------------------------------------------------------

def load_run(path: str | Path) -> RunDir:
    """One run folder named by the user (``--run``); a diverged run is refused."""
    run = RunDir(Path(path))
    if not run.exists():
        raise CollapseLabError(f"--run {path}: not a run folder (no run.json); point it at <store>/<run>")
    run.config  # an unreadable run.json is named here
    if run.meta.get("status") == "diverged":
        d = run.meta.get("diverged", {})
        raise CollapseLabError(f"--run {path}: the run diverged in round {d.get('round')} ({d.get('what')}); "
                               "its spectra would be of a broken model: choose another run")
    return run


def quiet(msg: str) -> None:
    """A ``warn`` that says nothing (the library's default; the commands print)."""


def no_progress(label: str, total: int) -> None:
    """A ``done(label, total)`` that says nothing (the library's default; the commands print)."""


def select_runs(store: Path, alphas: tuple[str, ...] = (), run_paths: tuple[str, ...] = (), dataset: str | None = None,
                model: str | None = None, regs: tuple[str, ...] = (), methods: tuple[str, ...] = (),
                warn: Callable[[str], None] = quiet, one_round: bool = False) -> list[RunDir]:
    """The runs to analyse: the ones named by ``run_paths``, else every run in ``store``
    matching the filters (nothing else is dropped: seeds of one configuration are
    aggregated by ``seed_groups``, other configurations drawn apart). All must share one
    data set and model. Diverged runs are left out by name; two folders holding the very same
    run (a copy) count once, said in a line. An unfinished run is refused, naming it and the
    fixes, unless ``one_round`` (the caller reads a round the user named for every run, or
    each run on its own): its last round beside the others' would mix rounds in a figure or
    a mean."""
    if run_paths:
        filters = [n for n, v in (("--alpha", alphas), ("--dataset", dataset), ("--model", model), ("--reg", regs),
                                  ("--method", methods)) if v]
        if filters:
            raise CollapseLabError(f"{', '.join(filters)} would be ignored with --run (the runs are named); drop one")
        runs = [load_run(p) for p in run_paths]
    else:
        runs = _filtered(Path(store), alphas, dataset, model, regs, methods, warn)
    for field in ("dataset", "model"):
        values = sorted({str(r.meta.get(field)) for r in runs})
        if len(values) > 1:
            raise CollapseLabError(f"the selected runs mix {field}s ({', '.join(values)}); choose one with --{field}")
    unfinished = [r for r in runs if r.meta.get("status") != "complete"]
    if unfinished and not one_round:
        m = unfinished[0].meta
        done = min(int(r.meta.get("rounds_complete", 0)) for r in unfinished)
        raise CollapseLabError(
            f"{unfinished[0].path.name} is unfinished ({m.get('rounds_complete', 0)} of {m.get('rounds')} rounds)"
            + (f" and {len(unfinished) - 1} more" if len(unfinished) > 1 else "") + "; its last round beside the "
            "others' would mix rounds: finish it (collapse-lab train --resume with the options it was trained with, or "
            f"the figures command that started it), choose one round for every run with --round {done}, or name the "
            "runs to use with --run")
    for r in unfinished:
        warn(f"{r.path.name} is unfinished ({r.meta.get('rounds_complete', 0)} of {r.meta.get('rounds')} rounds); "
             "the round named is read")
    return sorted(runs, key=sort_key)


def _filtered(store: Path, alphas, dataset, model, regs, methods, warn) -> list[RunDir]:
    found = find_runs(store, warn)
    for r in found:
        if r.meta.get("status") == "diverged":
            warn(f"{r.path.name} diverged in round {r.meta.get('diverged', {}).get('round')}; left out")
    runs = [r for r in found if r.meta.get("status") != "diverged" and r.meta.get("rounds_complete", 0) >= 1]
    if not runs and any(r.meta.get("status") == "diverged" for r in found):
        raise CollapseLabError(f"no usable runs in {store}: the trained ones diverged; retrain them with a lower "
                               "--lr (train --overwrite)")
    if not runs:
        raise CollapseLabError(f"no trained runs in {store}; run `collapse-lab train` first, or point --store at "
                               "the run store (or --run at a run folder)")
    want = {alpha_str(parse_alpha(a)) for a in alphas}
    for name, keep in (("--alpha", (lambda r: takes(r.meta.get("partition"), "alpha") and r.meta.get("alpha") in want)
                        if want else None),
                       ("--dataset", (lambda r: r.meta.get("dataset") == dataset) if dataset else None),
                       ("--model", (lambda r: r.meta.get("model") == model) if model else None),
                       ("--reg", (lambda r: r.meta.get("reg") in regs) if regs else None),
                       ("--method", (lambda r: r.meta.get("method") in methods) if methods else None)):
        if keep is None:
            continue
        left = [r for r in runs if keep(r)]
        if not left:
            have = sorted({str(r.meta.get(name[2:])) for r in runs})
            raise CollapseLabError(f"no trained run in {store} matches {name} (after the filters before it); "
                                   f"the runs left have {name[2:]}: {', '.join(have)}")
        runs = left
    return _drop_copies(runs, warn)


def _drop_copies(runs: list[RunDir], warn) -> list[RunDir]:
    by_identity: dict[str, list[RunDir]] = {}
    for r in runs:
        by_identity.setdefault(json.dumps(r.config.identity(), sort_keys=True, default=str), []).append(r)
    out = []
    for same in by_identity.values():
        same.sort(key=lambda r: r.meta.get("created", ""))
        out.append(same[-1])
        for r in same[:-1]:
            warn(f"{r.path.name} holds the same run as {same[-1].path.name} (a copy); the newer is used")
    return out


def seed_groups(runs: list[RunDir]) -> list[tuple[str, list[RunDir]]]:
    """Selected runs grouped by configuration (seeds together, ``group``), each with its
    label (``describe`` when there is one group) and the number of seeds when more than one."""
    configs = [r.config for r in runs]
    out = []
    gs = group(configs, runs, varying(configs, skip=("seed", "rounds")))  # a tag sets runs apart
    for g in gs:
        text = describe(g.runs[0].meta) if len(gs) == 1 else label(g.key, dicts=True)
        if len(g.runs) > 1:
            text += f" (n={len(g.runs)} seeds)"
        out.append((text, sorted(g.runs, key=lambda r: r.meta.get("seed", 0))))
    return sorted(out, key=lambda item: sort_key(item[1][0]))


def sort_key(run: RunDir):
    m = run.meta
    return (float(parse_alpha(m.get("alpha", "inf"))) if takes(m.get("partition"), "alpha") else 0.0,
            m.get("reg", ""), m.get("method", ""), run.path.name)


def iid_reference(store: Path, selected: list, alphas, run_paths, dataset=None, model=None, regs=(), methods=()) -> list:
    """A collapse figure needs its reference: where --alpha names only skewed settings, the
    store's IID runs (alpha inf) with the selected runs' other settings (seeds included)."""
    if not alphas or run_paths or any(alpha_str(parse_alpha(a)) == "inf" for a in alphas):
        return []
    try:
        iid = select_runs(store, ("inf",), (), dataset, model, regs, methods, warn=quiet)
    except CollapseLabError:
        return []

    def key(run) -> str:  # the settings but alpha
        ident = {k: v for k, v in run.config.identity().items() if k != "alpha"}
        return json.dumps(ident, sort_keys=True, default=str)

    want = {key(r) for r in selected}
    return [r for r in iid if key(r) in want]
