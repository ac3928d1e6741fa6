"""Which runs the catalogue's entries need, each once, with what each keeps; the smoke store;
the data sets read before anything trains. Plain functions over ``collapse_lab.plan.Plan``
(the preset, ``--smoke``, the data root, the precision and ``--set`` of one call)."""
from __future__ import annotations

from pathlib import Path

from ..errors import CollapseLabError
from ..store.naming import in_stored_precisions
from .overrides import describe

# from keeping least to keeping most (``wider``)
GLOBAL_ORDER, LOCAL_ORDER = ("last", "every", "all"), ("none", "last", "every", "all")



def wider(a: str, b: str, order: tuple) -> str:
    """The retention that keeps what either of ``a`` and ``b`` keeps (two every:N that
    differ: all)."""
    ka, kb = order.index(a.split(":")[0]), order.index(b.split(":")[0])
    if a != b and ka == kb == order.index("every"):
        return "all"
    return a if ka >= kb else b


def plan(entries, runs, store: Path, warn, keep: str = "read", note=None) -> tuple[list, list, dict]:
    """The entries' runs (each once; their smoke forms with ``smoke``), per entry its run
    names (or why it is not available), and the runs by name; ``runs``: the command's
    ``collapse_lab.plan.Plan`` (its preset, smoke, ``--set``). Each run keeps what the
    entries that read it read (``Entry.keeps``, their union for a shared run); ``keep``
    "all": every round's global and client models. ``note``: told of each stored run used in
    the other precision (``store.naming.in_stored_precision``)."""
    import dataclasses

    seen, per_entry, keeps = {}, {}, {}
    for e in entries:
        try:
            cs = runs.runs(e, warn, overrides={})
        except CollapseLabError as err:  # a model, method or data set the toolkit lacks (the baselines issue)
            per_entry[e.name] = f"not available at --preset {runs.preset}: {err}"
            continue
        if runs.overrides and cs:  # --set: one line when it changes nothing or cannot apply
            cs = overridden(e, runs, warn)
        if runs.precision is None:  # stored runs keep the precision they trained in
            cs = in_stored_precisions(store, cs, note)
        per_entry[e.name] = [c.run_name() for c in cs]
        g, loc = ("all", "all") if keep == "all" else e.keeps()
        for c in cs:
            seen.setdefault(c.run_name(), c)
            had = keeps.get(c.run_name(), ("last", "none"))
            keeps[c.run_name()] = (wider(had[0], g, GLOBAL_ORDER), wider(had[1], loc, LOCAL_ORDER))
    for name, c in seen.items():
        seen[name] = dataclasses.replace(c, keep_global=keeps[name][0], keep_local=keeps[name][1])
    return list(seen.values()), per_entry, seen


def overridden(e, runs, warn) -> list:
    """The entry's runs under the plan's ``--set``; each key must change some run of it
    (compared on the real runs: a smoke form cuts some settings, e.g. local training, to a
    few steps)."""
    def names(o):  # the run's name and its rounds (rounds is not part of the name: a longer run extends it)
        return [(c.run_name(), c.rounds) for c in runs.runs(e, warn, smoke=False, overrides=o)]

    before = names({})
    for k, v in runs.overrides.items():
        if names({k: v}) == before:
            raise CollapseLabError(f"--set {describe({k: v})}: changes none of {e.name}'s runs at --preset "
                                   f"{runs.preset} (they have it already); drop it")
    return runs.runs(e, warn)


def smoke_paths(smoke: bool, store: str, out: str, out_default: str) -> tuple[Path, Path]:
    """The store and output folder of a call: with ``--smoke`` the defaults become
    ``checkpoints-smoke`` and ``<out>-smoke`` (a smoke store never holds real runs: checked,
    and marked, by ``store.paths.check_smoke``); a smoke store without ``--smoke`` is refused."""
    from ..store.paths import check_smoke

    if smoke:
        store = "checkpoints-smoke" if store == "checkpoints" else store
        out = f"{out_default}-smoke" if out == out_default else out
    check_smoke(store, smoke)
    return Path(store), Path(out)


def lacking_data(names: list[str], failed: list[dict]) -> str | None:
    """Why an entry whose runs (``names``) could not train for missing data is not rendered
    (``missing_data`` named the folders), instead of "run ... is missing: figures trains it"."""
    missing = {f["run"]: f["error"] for f in failed if f.get("missing_data")}
    lacking = sorted({missing[n] for n in names if n in missing})
    return f"{'; '.join(lacking)} (the folder expected is named above; give --data-root)" if lacking else None


def missing_data(configs, say) -> tuple[list[dict], list]:
    """Every data set the runs need, read before anything trains: one line per missing data
    set naming the folder expected and where it looked; its runs are reported as failed and
    the others go on. Returns (the failures, the runs whose data are here)."""
    from ..data import dataset_of
    from ..data_root import default_data_root

    def key(c):
        return c.dataset, c.data_root, c.image_size, repr(sorted(c.dataset_options.items()))

    missing, here = {}, set()
    for c in configs:
        if key(c) in here or key(c) in missing:
            continue
        try:
            dataset_of(c)
            here.add(key(c))
        except CollapseLabError as e:
            missing[key(c)] = str(e)
    for (name, root, _, _), msg in missing.items():
        where = default_data_root()[1] if root is None else f"{root}"
        say(f"data set {name} is missing: {msg} (looked in: {where})")
    failed = [{"run": c.run_name(), "status": "failed", "error": f"data set {c.dataset} is missing",
               "missing_data": c.dataset} for c in configs if key(c) in missing]
    return failed, [c for c in configs if key(c) not in missing]


def estimates(entries, plans: dict, keep: str = "read", pilot_s: float | None = None,
              workers: int | None = None) -> dict:
    """Per preset (``plans``: preset -> its ``collapse_lab.plan.Plan``) the estimate of its
    runs (``plan.estimate``) and each entry's checkpoint bytes (a run shared by entries counts
    in each; the total counts it once); with ``pilot_s``, this machine's time now as a range
    (``plan.pilot``, as ``ladder --dry-run --pilot``)."""
    from ..plan.estimate import estimate
    from ..plan.pilot import hours_here, pilot

    out = {}
    for preset, runs in plans.items():
        configs, per_entry, by_name = plan(entries, runs, Path("."), lambda m: None, keep)
        out[preset] = estimate(configs)
        if pilot_s is not None and configs:
            out[preset]["here_hours"] = hours_here(out[preset], pilot(configs, pilot_s, workers))
        out[preset]["entries"] = {
            name: estimate([by_name[r] for r in names])["total"]["bytes"] if isinstance(names, list) else None
            for name, names in per_entry.items()}
    return out


def entry_rows(entries, per_entry, store: Path, out: Path, by_name: dict, suffix: str = "png") -> list[dict]:
    """Per entry: its renderer, its runs present and missing in ``store``, when ``out`` last
    got its render (or why it is not rendered)."""
    import time

    from ..store import RunDir, run_path

    rows = []
    for e in entries:
        names = per_entry[e.name]
        if isinstance(names, str):
            rows.append({"entry": e.name, "renderer": e.renderer, "runs": 0, "present": 0, "missing": 0,
                         "last_rendered": "-", "not_rendered": names, "title": title(e)})
            continue
        present = sum(1 for n in names if RunDir(run_path(store, by_name[n])).is_complete())
        rendered = out / f"{e.name}.{suffix}"
        last = time.strftime("%Y-%m-%d %H:%M", time.localtime(rendered.stat().st_mtime)) if rendered.is_file() else "-"
        rows.append({"entry": e.name, "renderer": e.renderer, "runs": len(names), "present": present,
                     "missing": len(names) - present, "last_rendered": last, "not_rendered": e.not_rendered,
                     "title": title(e)})
    return rows


def title(e) -> str:
    """An entry in words: its paper (fednc-* is FedETF's), where in it, and its caption's start."""
    paper = e.paper.split(" (")[0] + (" (journal)" if "journal" in e.paper else "")
    caption = e.caption if len(e.caption) <= 70 else e.caption[:67].rstrip() + "..."
    return f"{paper} {e.source}: {caption}"


def estimate_lines(plans: dict, smoke: bool, keep: str) -> list[str]:
    """``--dry-run``'s text for ``estimates``: each preset's plan (``plan.estimate.lines``)
    and its entries' checkpoint bytes, largest first."""
    from ..plan.estimate import human_bytes, lines

    out = []
    for preset, p in plans.items():
        out += lines(p, f"--preset {preset}" + (" --smoke" if smoke else "") + f" --keep {keep}")
        sized = sorted(((b, n) for n, b in p["entries"].items() if b is not None), reverse=True)
        out.append("  checkpoints per entry (largest first): " + ", ".join(f"{n} {human_bytes(b)}" for b, n in sized))
    return out


def entry_lines(rows: list[dict]) -> list[str]:
    """``--list``'s text for ``entry_rows``: a heading, then a line per entry."""
    out = [f"{'entry':<18} {'renderer':<14} {'runs':>5} {'present':>8} {'missing':>8}  last rendered"]
    for r in rows:
        tail = f"not rendered: {r['not_rendered']}" if r["not_rendered"] else r["last_rendered"]
        out.append(f"{r['entry']:<18} {r['renderer']:<14} {r['runs']:>5} {r['present']:>8} {r['missing']:>8}  {tail}")
        out.append(f"{'':<18} {r['title']}")
    return out
