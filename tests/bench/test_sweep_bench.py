"""``bench --sweep``: the runs the sweep's local pool trains are byte for byte the ones one
``train`` call stores (its identical-final-globals count), and nothing fails."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from collapse_lab.cli import cli


@pytest.mark.slow  # three trainings of 4 tiny runs, one of them a subprocess
def test_the_sweep_bench_finds_the_pool_equal_to_train():
    res = CliRunner().invoke(cli, ["bench", "--sweep", "--sweep-seeds", "1", "--sweep-rounds", "1",
                                   "--sweep-workers", "2", "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert got["runs"] == 4 and got["failed"] == 0 and got["identical_final_globals"] == 4
    assert got["rounds"] == 1 and got["sequential_seconds"] > 0 and got["stacked_max_rel_diff"] is not None
