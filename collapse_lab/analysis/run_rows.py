"""One row per stored run (``collapse-lab runs``, the report's table): what it is, how far it
trained, its last accuracy and its size on disk."""
from __future__ import annotations

from ..labels import partition_text, reg_text

COLUMNS = ("run", "dataset", "model", "method", "reg", "partition", "seed", "rounds", "epochs", "lr", "acc", "status",
           "size")


def row(run) -> dict:
    m = run.meta
    acc = None
    for e in reversed(run.metrics()):
        if e.get("event") == "round":
            acc = e.get("test_acc")
            break
    size = run.size_bytes()
    from ..store.integrity import damage_on_disk

    damage = damage_on_disk(run)  # a truncated checkpoint is said where the run is listed
    status = run.status + (f" after round {m.get('rounds_complete', 0)}" if run.status == "interrupted" else "")
    return {"run": run.path.name, "dataset": m.get("dataset"), "model": m.get("model"), "method": m.get("method"),
            "reg": reg_text(m), "partition": partition_text(m), "seed": m.get("seed"),
            "rounds": f"{m.get('rounds_complete', 0)}/{m.get('rounds')}", "epochs": m.get("local_epochs"),
            "lr": m.get("lr"), "acc": acc,
            "status": status + (f"; DAMAGED: {damage} (train --resume with its options repairs it)" if damage else ""),
            "size": size, "meta": m}


def cell(r: dict, c: str) -> str:
    v = r[c]
    if c == "acc":
        return "" if v is None else f"{v:.4f}"
    if c == "size":
        return f"{v / 1e6:.1f} MB"
    return str(v)
