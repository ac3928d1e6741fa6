"""The dead-unit evidence of docs/scale.md ("Dead units under FedDecorr"), as committed records.

    python docs/scale/dead_units.py DATA_ROOT STORE

trains (or reuses, in STORE) the runs the section quotes and writes two records beside the
ladder's:

- ``docs/scale/a/dead-units-timeline.json``: per round, the probe's dead units
  (``probe_dead_units``, 1,000 test images) of the global model in the cpu rung's FedDecorr
  runs of ICLR Fig. 3 at seed 0, alpha 0.01 and 0.05 (the runs of the ladder's cpu record,
  trained again: each keeps the record's final dead units and test accuracy beside its own, so a
  run that did not come out the same is seen);
- ``docs/scale/a/units.json``: ``collapse-lab units --json`` (``catalogue.unit_replay.trace``) for
  client 0's local training of round 1 at alpha 0.01, seed 0, in four networks at the cpu
  preset's lr 0.05 and 2 local epochs: the CNN at 1,000 and at 300 images a class, the CNN with
  BatchNorm and ResNet-20 at 300 a class.

``python docs/scale_numbers.py timeline units`` prints the numbers the page quotes from them.
DATA_ROOT holds sample a (``cifar10-subset``).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RECORD = HERE / "a" / "records" / "cpu--feddecorr-fig3.json"
# the networks of the units table: overrides of the cpu preset's FedDecorr run (rounds 1)
NETWORKS = {"cnn-1000": {}, "cnn-300": {"dataset_options": {"max_train_per_class": 300}},
            "cnn-bn-300": {"dataset_options": {"max_train_per_class": 300}, "model": "cnn-bn"},
            "resnet20-300": {"dataset_options": {"max_train_per_class": 300}, "model": "resnet20"}}


def planned(data_root: str, overrides: dict) -> list:
    from collapse_lab.analysis.catalogue import pick
    from collapse_lab.plan import Plan

    (entry,) = pick(["feddecorr-fig3"], "figure")
    return Plan("cpu", data_root=data_root, precision="fp32", overrides=overrides).runs(entry)


def train(configs: list, store: Path) -> list:
    """The runs trained (or found complete) in ``store``, every global model kept (``units``
    replays round 1 from round 0's)."""
    import dataclasses

    from collapse_lab.store import RunDir
    from collapse_lab.sweep import service

    configs = [dataclasses.replace(c, keep_global="all", keep_local="last") for c in configs]
    prepared = service.begin(configs, store, "store", resume=True)
    service.train_here(prepared, log=lambda m: print(m, file=sys.stderr))
    return [RunDir(p.path) for p in prepared]


def timeline(data_root: str, store: Path) -> dict:
    rec = json.loads(RECORD.read_text())
    kept = {r["run"]: r for r in rec["regime"]["runs"]}
    want = [c for c in planned(data_root, {}) if c.reg == "feddecorr" and c.seed == 0
            and str(c.identity()["alpha"]) in ("0.01", "0.05")]
    out = {}
    for run in train(want, store):
        probe = {e["round"]: e["probe_dead_units"] for e in run.metrics() if e.get("event") == "probe"}
        final = kept[run.path.name]
        if probe[max(probe)] is None or final["round"] != max(probe):
            raise SystemExit(f"{run.path.name}: no probe of its final round")
        out[run.path.name] = {"alpha": run.meta["alpha"], "seed": 0, "units": final["units"],
                              "probe_dead_units": [probe[r] for r in sorted(probe)],
                              "test_acc_final": [e for e in run.metrics() if e.get("event") == "round"][-1]["test_acc"],
                              "record_dead_units_final": final["dead_units"], "record_test_acc": final["test_acc"]}
    return {"source": "the probe's dead units (metrics.jsonl, probe_dead_units; 1,000 test images) of the "
                      "cpu rung's FedDecorr runs of feddecorr-fig3, rounds 0..10", "runs": out}


def units(data_root: str, store: Path) -> dict:
    from collapse_lab.catalogue.unit_replay import trace

    out = {}
    for name, over in NETWORKS.items():
        (cfg,) = [c for c in planned(data_root, {**over, "rounds": 1})
                  if c.reg == "feddecorr" and c.seed == 0 and str(c.identity()["alpha"]) == "0.01"]
        (run,) = train([cfg], store)
        out[name] = trace(run, 1, 0, None, data_root)
    return {"source": "collapse-lab units --run RUN --round 1 --client 0 --json, FedDecorr at alpha 0.01, seed 0, "
                      "the cpu preset (lr 0.05, 2 local epochs) with the network's overrides", "networks": out}


def main(argv: list[str]) -> int:
    from collapse_lab.files import write_json

    data_root, store = argv[0], Path(argv[1])
    write_json(HERE / "a" / "dead-units-timeline.json", timeline(data_root, store))
    write_json(HERE / "a" / "units.json", units(data_root, store))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
