"""A ladder cell's runs measured: each run's regime and evidence measured once from the
store and kept beside the records (``kept_evidence``), the runs still to train, and the
cell's entry rendered from the store or, where its runs are not all there, from the
evidence (``render.render_evidence``)."""
from __future__ import annotations

import json
from pathlib import Path

from . import kept_evidence


def measure(cell: dict, preset: str, store: Path, out: Path) -> dict:
    """Measure the cell's runs (each run's evidence as kept, else measured and kept), render
    its entry from the store, or from the evidence where its runs are not all there (a rung
    trained over several machines), and return its record."""
    from ..judging.ladder import summary
    from .render import render_evidence, render_figure

    e, configs = cell["entry"], cell["configs"]
    ms = [kept_evidence.read(out, c, cell["data"]) or keep_run(cell, preset, store, out, c) for c in configs]
    if all(complete(store, c) for c in configs):
        rec = render_figure(e, _context(cell, preset, store), out / cell["rung"].name)
    else:
        rec = render_evidence(e, _context(cell, preset, store), out / cell["rung"].name, ms)
    # Table 1's comparison is not kept here: ladder.claims_of computes it from the measures
    return {"claims": rec["claims"], "figure": rec["files"],
            "precision": rec["precision"], "regime": {**summary(ms), "runs": ms}}


def _context(cell: dict, preset: str, store: Path):
    """The analysis context of the cell's runs (one per cell: it holds their features)."""
    from ..plan import context

    if "ctx" not in cell:
        runs = cell["plan"]
        cell["ctx"] = context(store, preset, False, runs.data_root, runs.precision, cell["overrides"], plan=runs)
    return cell["ctx"]


def keep_run(cell: dict, preset: str, store: Path, out: Path, c) -> dict:
    """Measure one complete run of the cell in the store (its regime and evidence) and keep
    the measures beside the records (``kept_evidence``); returns them."""
    from ..analysis.evidence import run_evidence
    from ..judging.regime import measure_run, test_accuracy
    from ..store import RunDir, run_path

    ctx = _context(cell, preset, store)
    run = RunDir(run_path(store, c))
    m = measure_run(run, ctx.features, cell["train_source"], c.rounds)
    ev = run_evidence(ctx, run, c.rounds, test_accuracy(run))
    m = {**m, **ev, "seed": c.seed, "reg": c.reg, "alpha": c.identity()["alpha"], "setting": c.seedless_key(),
         "torch": (run.meta.get("versions") or {}).get("torch")}  # a run of torch 2.11 never passes for 2.13's
    kept_evidence.keep(out, c, cell["data"], m)
    return json.loads(json.dumps(m))  # as it reads back from the file: one value whichever way it came


def keeper(cells_: list[dict], preset: str, store: Path, out: Path, say):
    """A callback for each run the training completes: its evidence measured and kept at
    once, so that a session that ends mid-rung loses none of the runs it finished."""
    owner = {}
    for c in cells_:
        for r in c.get("configs", []):
            owner.setdefault(r.run_name(), (c, r))

    def on_complete(run: str) -> None:
        name = Path(run).name
        if name in owner and owner[name][0].get("data") is not None:
            c, r = owner[name]
            keep_run(c, preset, store, out, r)
            say(f"ladder: {name}: evidence kept in {kept_evidence.path(out, r)}")
    return on_complete


def complete(store: Path, cfg) -> bool:
    """Whether the store holds the run with at least the rounds ``cfg`` reads."""
    from ..store import RunDir, run_path

    return RunDir(run_path(store, cfg)).is_complete(cfg.rounds)


def to_train(cell: dict, out: Path) -> list:
    """The cell's runs to train: those without kept evidence on these images, where the
    entry can be drawn from evidence (``analysis.evidence.VALUES``; another renderer reads
    every run from the store)."""
    from ..analysis.evidence import VALUES

    if cell["entry"].renderer not in VALUES or int(cell["entry"].params.get("client", 0)) != 0:
        return list(cell["configs"])
    return kept_evidence.missing(out, cell["configs"], cell["data"])


def untrained(cell: dict, store: Path, out: Path) -> list:
    return [r for r in to_train(cell, out) if not complete(store, r)]


def keep_present(cell: dict, preset: str, store: Path, out: Path) -> int:
    """``--no-train`` on a cell not trained through: the evidence of its runs that are in the
    store, kept (another machine then trains only the rest); how many."""
    if cell.get("data") is None or cell.get("train_source") is None:  # the images cannot be named here
        return 0
    new = [r for r in kept_evidence.missing(out, cell["configs"], cell["data"]) if complete(store, r)]
    for r in new:
        keep_run(cell, preset, store, out, r)
    return len(new)
