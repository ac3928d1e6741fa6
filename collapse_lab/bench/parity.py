"""Parity with the released FedDecorr code (issue 40): collapse-lab's per-round global test
accuracy beside the released code's, on the same configuration, over seeds.

The released side comes from a file (``released_driver.py`` writes it: the released code's
own per-round accuracies, run in its own environment); this side trains the same
configuration through ``collapse_lab.train`` with the released partition
(``--partition-option rng=released``: the same client index sets for the same seed) and
compares the curves. A benchmark, not a test: 20 rounds of ResNet-20 take minutes a seed.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from ..errors import CollapseLabError

FORMAT = "collapse-lab released-parity 1"
LAST = 5  # the "late rounds" window: the mean over the last LAST rounds


def read_released(path) -> dict:
    """The released code's record (format ``FORMAT``), checked."""
    p = Path(path)
    try:
        rec = json.loads(p.read_text())
    except (OSError, ValueError) as e:
        raise CollapseLabError(f"--released {path}: not readable as JSON ({e.__class__.__name__}); give the file "
                               "released_driver.py wrote") from None
    if not isinstance(rec, dict) or rec.get("format") != FORMAT:
        raise CollapseLabError(f"--released {path}: not a released-parity file (format {FORMAT!r} expected)")
    seeds = rec.get("seeds")
    if not isinstance(seeds, dict) or not seeds or not all(
            isinstance(v, list) and v and all(isinstance(a, (int, float)) for a in v) for v in seeds.values()):
        raise CollapseLabError(f"--released {path}: 'seeds' must map each seed to its per-round accuracies")
    rounds = {len(v) for v in seeds.values()}
    if len(rounds) != 1 or rounds != {int(rec["config"]["n_comm_round"])}:
        raise CollapseLabError(f"--released {path}: every seed needs n_comm_round = {rec['config']['n_comm_round']} "
                               f"accuracies (found {sorted(rounds)})")
    return rec


def train_options(cfg: dict, data_root, seed: int) -> dict:
    """collapse_lab.train's options for the released main.py's flags ``cfg``."""
    if cfg.get("approach", "fedavg") != "fedavg":
        raise CollapseLabError(f"released approach {cfg['approach']!r}: the parity benchmark compares fedavg")
    if cfg.get("partition") != "noniid":
        raise CollapseLabError(f"released partition {cfg.get('partition')!r}: the parity benchmark compares the "
                               "Dirichlet partition (noniid)")
    opts = dict(dataset=cfg["dataset"], model=cfg["model"], partition="dirichlet", alphas=[float(cfg["alpha"])],
                partition_options={"rng": "released"}, clients=int(cfg["n_parties"]), rounds=int(cfg["n_comm_round"]),
                local_epochs=int(cfg["epochs"]), lr=float(cfg["lr"]), momentum=float(cfg["rho"]),
                weight_decay=float(cfg["weight_decay"]), batch_size=int(cfg["batch_size"]), seeds=[seed],
                method="fedavg", keep_local="none", probe=0, preset="paper",
                precision="fp32")  # the released code trains in fp32 everywhere (auto would be bf16 on CUDA)
    if data_root is not None:
        opts["data_root"] = str(data_root)
    if cfg.get("feddecorr"):
        opts.update(reg="feddecorr", beta=float(cfg.get("feddecorr_coef", 0.1)), decorr_norm="official")
    return opts


def summary(released: dict[int, list[float]], ours: dict[int, list[float]], last: int = LAST) -> dict:
    """Per seed and over seeds: the final round's accuracy, the mean over the last ``last``
    rounds and over all rounds, for both codes; the difference (collapse-lab - released) as
    mean [95 % Student-t interval] over seeds and in how many seeds collapse-lab is higher."""
    from ..judging.seeds import t_interval

    seeds = sorted(released)
    if sorted(ours) != seeds:
        raise ValueError("both sides need the same seeds")
    measures = {"final": lambda c: c[-1], f"last{last}": lambda c: sum(c[-last:]) / len(c[-last:]),
                "all": lambda c: sum(c) / len(c)}
    rows, over = [], {}
    for s in seeds:
        rows.append({"seed": s, **{f"{m}_{side}": f(curve) for m, f in measures.items()
                                   for side, curve in (("released", released[s]), ("ours", ours[s]))}})
    for m in measures:
        d = [r[f"{m}_ours"] - r[f"{m}_released"] for r in rows]
        mean, lo, hi = t_interval(d)
        over[m] = {"released": sum(r[f"{m}_released"] for r in rows) / len(rows),
                   "ours": sum(r[f"{m}_ours"] for r in rows) / len(rows),
                   "difference": mean, "interval": [lo, hi], "ours_higher_in": sum(x > 0 for x in d), "seeds": len(d)}
    per_round = [{"round": i + 1, "released": sum(released[s][i] for s in seeds) / len(seeds),
                  "ours": sum(ours[s][i] for s in seeds) / len(seeds)} for i in range(len(released[seeds[0]]))]
    return {"rows": rows, "over_seeds": over, "per_round": per_round, "last": last}


def run(released_file, data_root=None, store=None, progress=None) -> dict:
    """Train collapse-lab's side for every seed of the file (runs already in ``store`` are
    reused) and compare."""
    import tempfile

    from ..runspec.resolve import resolve_runs
    from ..store import RunDir, lock
    from ..store.paths import check_store_for_writing
    from ..training.engine import train
    from ..training.disk import check_disk
    from ..training.prepare import prepare, take_lock

    rec = read_released(released_file)
    seeds = sorted(int(k) for k in rec["seeds"])
    configs = [c for s in seeds for c in resolve_runs({}, values=train_options(rec["config"], data_root, s),
                                                         where="the released-parity benchmark")]
    # the same store checks as train's (a file, a smoke store, no write permission: one line)
    store = check_store_for_writing(store, "store") if store is not None else Path(tempfile.mkdtemp(prefix="parity-"))
    prepared = prepare(configs, store, resume=True)
    check_disk(prepared, store)
    ours = {}
    for s, p in zip(seeds, prepared):
        if progress:
            progress(f"collapse-lab, seed {s} ...")
        if p.action in ("train", "resume"):
            take_lock(p)
            try:
                train(p)
            finally:
                lock.release(p.path)
        run = RunDir(p.path)
        accs = [e["test_acc"] for e in run.metrics() if e.get("event") == "round" and e["round"] >= 1]
        if run.meta.get("status") != "complete" or len(accs) != len(rec["seeds"][str(s)]):
            raise CollapseLabError(f"seed {s}: collapse-lab's run {p.path} is {run.meta.get('status')}; "
                                   "see its metrics.jsonl")
        ours[s] = accs
        if progress:
            progress(f"  seed {s}: round {len(accs)} test acc {accs[-1]:.4f}")
    released = {int(k): [float(a) for a in v] for k, v in rec["seeds"].items()}
    out = summary(released, ours)
    out.update(config=rec["config"], released_logging_evals=rec.get("logging_evals"), store=str(store),
               released_curves={str(k): v for k, v in released.items()}, ours_curves={str(k): v for k, v in ours.items()})
    return out


def text(r: dict) -> str:
    """The comparison as a page of text: per seed, over seeds, the mean curves."""
    c = r["config"]
    lines = [f"released FedDecorr code vs collapse-lab: {c['approach']}, {c['model']}, {c['dataset']}, "
             f"{c['partition']} alpha {c['alpha']}, {c['n_parties']} clients, {c['n_comm_round']} rounds x "
             f"{c['epochs']} local epoch(s), lr {c['lr']}, momentum {c['rho']}, weight decay {c['weight_decay']}, "
             f"batch {c['batch_size']} (released logging evaluations "
             f"{'kept' if r.get('released_logging_evals') else 'skipped'})", "",
             f"| seed | final: released | collapse-lab | last {r['last']}: released | collapse-lab | "
             "all rounds: released | collapse-lab |", "|---|---|---|---|---|---|---|"]
    last = f"last{r['last']}"
    for row in r["rows"]:
        lines.append(f"| {row['seed']} | " + " | ".join(f"{row[f'{m}_{side}']:.4f}" for m in ("final", last, "all")
                                                       for side in ("released", "ours")) + " |")
    lines.append("")
    for m, name in (("final", "final round"), (last, f"last {r['last']} rounds"), ("all", "all rounds")):
        o = r["over_seeds"][m]
        lo, hi = o["interval"]
        iv = "" if math.isnan(lo) else f" [{100 * lo:+.2f}, {100 * hi:+.2f}]"
        lines.append(f"{name}: collapse-lab - released {100 * o['difference']:+.2f} points{iv} (95 % t interval over "
                     f"{o['seeds']} seeds); collapse-lab higher in {o['ours_higher_in']} of {o['seeds']}")
    lines += ["", "mean curve over seeds (round: released, collapse-lab, difference):"]
    lines += [f"  {p['round']:3d}: {p['released']:.4f} {p['ours']:.4f} {100 * (p['ours'] - p['released']):+.2f}"
              for p in r["per_round"]]
    return "\n".join(lines)
