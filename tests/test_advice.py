"""Advice names only options the command has: the store's pruned-round line carries the
caller's advice (analyses: --round; units: the rounds it can replay; the catalogue: none),
and a grid too large says --max-runs only where the command has it."""
from __future__ import annotations

import json

import pytest

from collapse_lab.errors import CollapseLabError
from collapse_lab.runspec.expand import expand
from collapse_lab.store import RunDir
from collapse_lab.store.retention import check_readable_round


def _run(tmp_path) -> RunDir:
    d = tmp_path / "r"
    (d / "round_3").mkdir(parents=True)
    (d / "round_3" / "global.safetensors").write_bytes(b"x")
    (d / "run.json").write_text(json.dumps({"rounds": 3, "rounds_complete": 3, "status": "complete",
                                            "pruned": {"global": [0, 1, 2], "local": []}}))
    return RunDir(d)


def test_a_pruned_round_says_only_the_callers_advice(tmp_path):
    run = _run(tmp_path)
    with pytest.raises(CollapseLabError) as e:
        check_readable_round(run, 1, None)
    assert str(e.value).endswith("rounds that have it: [3]") and "--round" not in str(e.value)
    with pytest.raises(CollapseLabError, match=r"rounds that have it: \[3\]: choose one with --round$"):
        check_readable_round(run, 1, None, "choose one with --round")


def test_a_grid_too_large_names_max_runs_only_where_it_exists():
    spec = {"base": {"dataset": "digits"}, "grid": {"seed": list(range(5))}}
    with pytest.raises(CollapseLabError, match="raise --max-runs"):
        expand(spec, "sweep spec", max_runs=2)
    with pytest.raises(CollapseLabError) as e:
        expand(spec, "analyses/specs/x.yaml", max_runs=2, max_option=None)
    assert "--max-runs" not in str(e.value)
