"""The ladder of scales (docs/scale.md): per rung of ``--set`` overrides (``rungs``) and
entry, the runs trained through the catalogue, the figure rendered, each run's regime
measured and the numbers kept as a record in ``OUT/records/<rung>--<entry>.json``; a record
that matches (the same runs, the same images) is read instead of trained again. Plain
functions over the command's ``collapse_lab.plan.Plan``; ``ladder_report`` writes the
outputs from the records."""
from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

from ..analysis.evidence import FORMAT  # of a record written now (2: with each run's evidence)
from ..analysis.ladder import verdict_line
from ..errors import CollapseLabError
from .cell_measures import complete, keep_present, keeper, measure, to_train, untrained
from .planning import LOCAL_ORDER, plan, wider
from .training import train_missing

READ_FORMATS = (1, FORMAT)  # records kept: format 1 keeps verdicts only, and is read as it is


def cells(entries, rungs, preset: str, store: Path, where: str = "--rungs", data_root: str | None = None,
          precision: str | None = None, seed_base: int = 0) -> list[dict]:
    """Per rung and entry the runs (each keeping its last round's client models: the regime
    reads them) and the overrides that change them; where a rung's setting cannot apply to
    an entry (a key its grid varies), the cell says why. ``seed_base``: every seed shifted by
    it (``ladder --seed-base``), so a replication on another data sample draws new partitions
    and initial weights instead of repeating the first sample's (its record keeps the base)."""
    from ..plan import Plan

    runs = Plan(preset, data_root=data_root, precision=precision)  # one per call: rungs share runs

    out = []
    for rung0 in rungs:
        for e in entries:
            if rung0.entries is not None and e.name not in rung0.entries:
                continue
            rung = shifted(rung0, e, runs, seed_base)
            try:
                over = applying(e, runs, rung.overrides)
            except CollapseLabError as err:  # a value train refuses (lr=-1, a model that does not exist)
                raise CollapseLabError(f"{where}: rung {rung.name}: {err}") from None
            if isinstance(over, str):
                if rung.entries is not None:  # named for it: the file is wrong
                    raise CollapseLabError(f"{where}: rung {rung.name}: {over}")
                out.append({"rung": rung, "entry": e, "na": over})
                continue
            configs, per_entry, _ = plan([e], runs.with_overrides(over), store, lambda m: None)
            if isinstance(per_entry[e.name], str):
                raise CollapseLabError(f"{e.name}: {per_entry[e.name]}")
            configs = [dataclasses.replace(c, keep_local=wider(c.keep_local, "last", LOCAL_ORDER)) for c in configs]
            out.append({"rung": rung, "entry": e, "overrides": over, "configs": configs,
                        "plan": runs.with_overrides(over), **({"seed_base": seed_base} if seed_base else {})})
    return out


def shifted(rung, e, runs, seed_base: int):
    """The rung with its seeds (else the entry's at the preset) shifted by ``seed_base``."""
    if not seed_base:
        return rung
    seeds = rung.seeds or tuple((e.runs.get(runs.preset) or {}).get("seeds", [0]))
    new = tuple(seed_base + s for s in seeds)
    return dataclasses.replace(rung, seeds=new, overrides={**rung.overrides, "seeds": list(new)})


def applying(e, runs, overrides: dict) -> dict | str:
    """The overrides that change the entry's runs (a setting it has already is dropped: the
    rung's runs are then the preset's); a reason where one cannot apply. ``runs``: the
    command's ``collapse_lab.plan.Plan``."""
    def names(o):  # rounds is not part of a run's name (a longer run extends it)
        return [(c.run_name(), c.rounds) for c in runs.runs(e, overrides=o)]

    from ..plan import with_overrides

    preset = runs.preset
    before = names({})
    kept = {}
    for k, v in overrides.items():
        try:  # a key the entry varies across its runs (its grid) cannot be one value for all
            with_overrides(e.name, preset, e.runs.get(preset) or {}, {k: v})
        except CollapseLabError as err:
            return f"does not apply to {e.name}: {err}"
        if names({k: v}) != before:
            kept[k] = v
    return kept


def record_path(out: Path, cell: dict) -> Path:
    return out / "records" / f"{cell['rung'].name}--{cell['entry'].name}.json"


def data_identity(cell: dict, source) -> dict:
    """Which images the cell's runs read: the data root and the test split's content hash
    (``source``: a test-split FeatureSource, which reads each data set once)."""
    cfg = cell["configs"][0]
    _, fp = source.dataset(cfg)
    return {"dataset": cfg.dataset, "data_root": cfg.data_root, "test_sha256": fp}


def kept(out: Path, cell: dict, data: dict | None) -> dict | None:
    """The cell's record when it holds these runs on these data (else None); ``data`` None:
    on any data (the data set cannot be read to check which images the record names)."""
    p = record_path(out, cell)
    if not p.is_file():
        return None
    try:
        rec = json.loads(p.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    from ..judging.evidence_check import check_record

    check_record(rec, str(p))
    same = (rec.get("format") in READ_FORMATS and rec.get("runs") == [c.run_name() for c in cell["configs"]]
            and rec.get("rounds") == [c.rounds for c in cell["configs"]]
            and (data is None or rec.get("data", {}).get("test_sha256") == data["test_sha256"]))
    return rec if same else None


def other_records(folder: str, cells_: list[dict]) -> list[dict]:
    """The kept records of the same rungs on another sample of the data (``--other-sample``);
    records of the same images are refused: two samples must not share them."""
    recs = []
    for c in cells_:
        if "na" in c:
            continue
        p = Path(folder) / "records" / f"{c['rung'].name}--{c['entry'].name}.json"
        if not p.is_file():
            continue
        try:
            rec = json.loads(p.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise CollapseLabError(f"--other-sample {folder}: {p.name} is not a ladder record ({e}); "
                                   "point it at another ladder's --out") from None
        if c.get("data") and rec.get("data", {}).get("test_sha256") == c["data"]["test_sha256"]:
            raise CollapseLabError(f"--other-sample {folder}: {p.name} was computed on the same images as this "
                                   "ladder; give the --out of a ladder on another sample of the data")
        recs.append(rec)
    if not recs:
        raise CollapseLabError(f"--other-sample {folder}: no record of these rungs and entries there (its records/ "
                               "folder has none); run the ladder on the other sample first")
    return recs


def match_data(cells_: list[dict], store: Path, out: Path, dry_run_: bool, data_root: str | None = None,
               no_train: bool = False) -> list[str]:
    """Each cell's data identity, its kept record (if one was computed on these images) and
    a check that the store's runs read this data sample; a --dry-run without the data goes on,
    returning why (its kept records cannot be matched), and so does --no-train, which takes a
    kept record by its runs and rounds alone (the images it names cannot be checked here)."""
    from ..analysis.features import FeatureSource

    source = FeatureSource(split="test", data_root=data_root)
    train_source = FeatureSource(split="train", data_root=data_root)
    unread = []
    for c in cells_:
        if "na" in c:
            continue
        try:
            c["data"] = data_identity(c, source)
        except CollapseLabError as err:
            if not (dry_run_ or no_train):
                raise
            c["kept"] = kept(out, c, None) if no_train else None
            c["data"], c["train_source"] = (c["kept"] or {}).get("data"), None
            unread.append(str(err))
            continue
        c["train_source"] = train_source
        c["kept"] = kept(out, c, c["data"])
        if c["kept"] is None:
            check_store_data(store, c["configs"], c["data"])
    return unread


def check_store_data(store: Path, configs, data: dict) -> None:
    """Runs of one store are one data sample: a stored run read from another data root
    (another sample under the same names) is refused, not rendered as this one."""
    from ..store import RunDir, run_path

    for c in configs:
        p = run_path(store, c)
        if RunDir(p).exists():
            had = RunDir(p).meta.get("data_root")
            if had and data["data_root"] and Path(had).resolve() != Path(data["data_root"]).resolve():
                raise CollapseLabError(f"--store {store}: run {p.name} was trained on the data at {had}, not "
                                       f"{data['data_root']}; give each data sample a --store of its own")


def climb(cells_: list[dict], preset: str, store: Path, out: Path, workers, stack: int, say,
          no_train: bool = False, only: set[str] | None = None) -> list[dict]:
    """Every cell's record, rung by rung: read where kept, else trained, rendered, measured
    and kept. Returns the records in the ladder's order. ``no_train``: a cell whose runs
    are not all in the store is reported as not trained yet, and nothing trains; ``only``: the
    rungs that may train (the others as with ``no_train``, their store left unmeasured)."""
    from ..plan.estimate import estimate
    from ..files import write_json

    records, rungs = [], list(dict.fromkeys(c["rung"].name for c in cells_))
    for i, name in enumerate(rungs):
        todo = [c for c in cells_ if c["rung"].name == name]
        if no_train or (only is not None and name not in only):
            _not_trained(todo, preset, store, out, no_train, only)
        fresh = [c for c in todo if "na" not in c and c["kept"] is None]
        runs = {r.run_name(): r for c in fresh for r in to_train(c, out)}
        every = {r.run_name() for c in fresh for r in c["configs"]}  # to render and measure, kept or trained now
        say(f"ladder: rung {i + 1} of {len(rungs)} ({name}): {len(todo)} entr{'y' if len(todo) == 1 else 'ies'}, "
            + (f"{len(every)} run(s) to render and measure, {len(runs)} without kept evidence" if fresh else
               "not trained yet (--no-train)" if all("na" in c for c in todo) else "its records kept (nothing trains)"))
        t0 = time.time()
        failed = train_missing(list(runs.values()), store, "local", workers, stack, None, say,
                               on_complete=keeper(fresh, preset, store, out, say)) if runs else []
        wall = round(time.time() - t0, 1)
        if failed:
            raise CollapseLabError(f"rung {name}: {len(failed)} run(s) did not train ({failed[0]['run']}: "
                                   f"{failed[0].get('error') or failed[0]['status']}); the same command continues")
        for c in todo:
            base = {"format": FORMAT, "rung": name, "note": c["rung"].note, "set": list(c["rung"].items),
                    "entry": c["entry"].name, "preset": preset,
                    **({"seeds": list(c["rung"].seeds)} if c["rung"].seeds else {}),
                    **({"seed_base": c["seed_base"]} if c.get("seed_base") else {})}
            if "na" in c:
                records.append({**base, "na": c["na"]})
                continue
            hours = estimate(c["configs"])["total"]["hours"].get("cpu-2core")
            est_s = None if hours is None else round(hours * 3600, 1)
            if c["kept"] is not None:  # its measurements as kept; the cost as the project now estimates it
                say(f"ladder: {name} / {c['entry'].name}: numbers kept in {record_path(out, c)} (not trained again)")
                records.append({**c["kept"], "estimated_seconds": est_s})
                continue
            rec = {**base, "applied": c["overrides"], "estimated_seconds": est_s,
                   "runs": [r.run_name() for r in c["configs"]], "rounds": [r.rounds for r in c["configs"]],
                   "data": c["data"],
                   **measure(c, preset, store, out),
                   **_walls(wall, len(fresh), len(runs), len(every))}
            write_json(record_path(out, c), rec)
            records.append(rec)
            say(f"ladder: {name} / {c['entry'].name}: " + verdict_line(rec))
    return records


def _walls(wall: float, cells: int, trained: int, runs: int) -> dict:
    """The rung's wall time, where it is one: every run trained by this command (a rung put
    together from evidence kept by earlier commands has no wall time, and a record rebuilt
    from its evidence alone is then the same bytes); the entry's own where it is the rung's
    only one."""
    whole = wall if trained == runs else None
    return {"wall_seconds": whole if cells == 1 else None, "rung_wall_seconds": whole}


def _not_trained(todo: list[dict], preset: str, store: Path, out: Path, no_train: bool, only) -> None:
    """A rung that does not train here: what the store lacks is said in each cell as not
    trained yet; with ``--no-train`` what it has is kept as evidence."""
    for c in todo:
        if "na" not in c and c["kept"] is None and (lack := untrained(c, store, out)):
            kept_now = c["kept_now"] = keep_present(c, preset, store, out) if no_train else 0
            c["na"] = (f"not trained yet (--rung {' --rung '.join(sorted(only))} trained the others)"
                       if not no_train else "not trained yet (the ladder without --no-train trains it)"
                       if len(lack) == len(c["configs"]) and not kept_now else
                       f"not trained yet ({len(lack)} of {len(c['configs'])} runs; the ladder without "
                       "--no-train trains them" + (f"; the evidence of {kept_now} kept" if kept_now else "") + ")")


def dry_rows(cells_: list[dict], store: Path, records_out: Path, here: dict | None = None) -> list[dict]:
    """Each rung's runs, those present and to train, and the estimated time of the latter
    (``ladder --dry-run``); ``here``: a pilot of this machine (``plan.pilot``), whose range
    each row then gives as ``here_hours``."""
    from ..plan.estimate import estimate
    from ..plan.pilot import hours_here

    out, planned = [], set()  # runs an earlier rung trains (rungs share runs: e.g. FedAvg's under an Eq. 8 rung)
    for name in dict.fromkeys(c["rung"].name for c in cells_):
        todo = [c for c in cells_ if c["rung"].name == name and "na" not in c]
        runs = {r.run_name(): r for c in todo if c.get("kept") is None for r in c["configs"]}
        evidenced = {r.run_name() for c in todo if c.get("kept") is None for r in c["configs"]} - {
            r.run_name() for c in todo if c.get("kept") is None for r in to_train(c, records_out)}
        missing = [r for n, r in runs.items() if (n, r.rounds) not in planned and n not in evidenced
                   and not complete(store, r)]
        planned |= {(n, r.rounds) for n, r in runs.items()}
        plan = estimate(missing) if missing else None
        est = plan["total"]["hours"] if plan else {}
        hours, gpu = est.get("cpu-2core", 0.0), est.get("H100", 0.0)
        out.append({"rung": name, "entries": [c["entry"].name for c in todo],
                    "kept": [c["entry"].name for c in todo if c.get("kept") is not None],
                    "runs": len(runs), "to_train": len(missing), "run_rounds": sum(r.rounds for r in missing),
                    "cpu_2core_hours": round(hours, 4),
                    "h100_hours": round(gpu, 4),
                    "overrides": [c["rung"].items for c in todo][:1],
                    **({"here_hours": hours_here(plan, here) if plan else (0.0, 0.0)} if here is not None else {})})
    return out
