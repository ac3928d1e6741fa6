"""A sweep's runs made ready to train: SPEC expanded through the train resolver (in their
stored precisions where the spec leaves the precision open), then planned against the store
(complete runs skipped, unfinished ones continued), the runs a SLURM job holds set apart,
and the rest cut into units of work (``--stack``)."""
from __future__ import annotations

from pathlib import Path


def spec_runs(spec: str, store: Path, max_runs: int, data_root: str | None, warn, say):
    """SPEC's runs, its loaded text (its ``slurm:`` section is the command's to read) and
    whether it leaves the precision open (a stored run then keeps the one it trained in)."""
    from ..runspec.expand import expand, load_spec, precision_open
    from ..store.naming import in_stored_precisions

    loaded = load_spec(spec)
    configs = expand(loaded, f"sweep spec {spec}", warn=warn, max_runs=max_runs, distinct=True, data_root=data_root)
    auto = precision_open(loaded)
    if auto:
        configs = in_stored_precisions(Path(store), configs, say)
    return configs, loaded, auto


def units(configs, store: Path, backend: str, stack: int):
    """(the plan, the units of work, the runs that train alone and why, the runs a SLURM job
    is training): on SLURM a run a queued or running job holds is watched, not refused for
    its lock."""
    from . import service

    busy = []
    if backend == "slurm":
        from .slurm import split_busy

        configs, busy = split_busy(Path(store), configs)
    planned = service.plan(configs, store)
    work, alone = service.work_units(planned, stack)
    return planned, work, alone, busy


def submitted(jobs, todo, total: int, watch: str) -> tuple[dict, str]:
    """What ``--backend slurm`` without ``--wait`` prints: the jobs as JSON and the line."""
    line = (f"{len(todo)} run(s) to train, {total - len(todo)} already complete; SLURM job(s): "
            f"{', '.join(sorted({j for _, j in jobs})) or 'none'}; watch with: {watch} (or squeue --me); "
            "the runs land in the store as the jobs finish")
    return {"submitted": [{"job_id": j, "runs": [c.run_name() for c in u]} for u, j in jobs], "watch": watch}, line
