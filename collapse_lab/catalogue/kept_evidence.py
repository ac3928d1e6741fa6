"""Each run's evidence kept beside a ladder's records the moment the run is complete
(``OUT/records/runs/<run>-r<rounds>.json``: its regime measures, accuracy curve and final
spectra, ``analysis.evidence``), so that a rung trained over several machines or sessions,
each with a store that does not outlive it, trains every run once: a later ladder with the
same ``--out`` trains only the runs without kept evidence on the same images, and assembles
the rung's record from the evidence when its runs are not all in its store.

A run's evidence depends on its settings, its rounds and the images alone (training is the
same on any machine), so evidence measured on one machine stands for the run on another.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..analysis.evidence import FORMAT

FOLDER = "runs"


def path(out: Path, cfg) -> Path:
    return Path(out) / "records" / FOLDER / f"{cfg.run_name()}-r{cfg.rounds}.json"


def read(out: Path, cfg, data: dict | None) -> dict | None:
    """The run's kept measures at ``cfg.rounds`` on the images ``data`` names (None: the
    images cannot be read here, so any are taken, as ``--no-train`` takes a record), or None."""
    p = path(out, cfg)
    if not p.is_file():
        return None
    try:
        kept = json.loads(p.read_text())
    except (OSError, json.JSONDecodeError):  # a file cut short is measured again, not trusted
        return None
    if not isinstance(kept, dict) or kept.get("format") != FORMAT or kept.get("run") != cfg.run_name() \
            or kept.get("rounds") != cfg.rounds or not isinstance(kept.get("measures"), dict):
        return None
    if data is not None and (kept.get("data") or {}).get("test_sha256") != data.get("test_sha256"):
        return None
    from ..judging.evidence_check import check_measures

    return check_measures(kept["measures"], str(p), cfg.rounds)  # valid JSON edited or damaged: refused, named


def keep(out: Path, cfg, data: dict | None, measures: dict) -> Path:
    """Write the run's measures (atomically: a reader sees the whole file or none)."""
    from ..files import write_json

    p = path(out, cfg)
    write_json(p, {"format": FORMAT, "run": cfg.run_name(), "rounds": cfg.rounds, "data": data,
                   "measures": measures})
    return p


def missing(out: Path, configs, data: dict | None) -> list:
    """The configs whose evidence is not kept."""
    return [c for c in configs if read(out, c, data) is None]
