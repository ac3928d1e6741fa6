"""A run another process trained between this command's planning and its training: the
refusal is recognised as a lost race (waited for, then read), not reported as a failure."""
from __future__ import annotations

import pytest

from collapse_lab.catalogue.busy import LOCKED, lost_the_lock, raced, wait_for
from collapse_lab.errors import CollapseLabError
from collapse_lab.runspec.resolve import resolve_runs
from collapse_lab.training.engine import train
from collapse_lab.training.prepare import prepare, take_lock

FLAGS = {"dataset": "gaussian", "dataset_option": ["dim=8", "train_per_class=20", "test_per_class=5"],
         "local_epochs": 1, "batch_size": 16, "rounds": 1, "clients": 2, "alpha": ["0.5"], "device": "cpu"}


def test_a_run_trained_by_another_command_after_planning_is_a_lost_race_then_read(tmp_path):
    (cfg,) = resolve_runs(FLAGS)
    (mine,) = prepare([cfg], tmp_path)  # this command plans: a new run
    (theirs,) = prepare([cfg], tmp_path)  # the other command plans the same run and trains it first
    train(theirs)
    with pytest.raises(CollapseLabError) as e:
        take_lock(mine)
    results = [{"run": cfg.run_name(), "status": "failed", "error": str(e.value)},
               {"run": "other_run", "status": "failed", "error": "diverged at round 1"}]
    assert lost_the_lock(results, [cfg]) == [cfg]
    assert [raced(r) for r in results] == [True, False]
    assert raced({"run": "r", "status": "failed", "error": f"{tmp_path}/r {LOCKED} (pid 1 on vm)"})
    said = []
    assert wait_for(tmp_path, [cfg], said.append, poll=0.01) == []
    assert said == ["1 of 1 run(s) the other process trained are complete"]


def test_a_failure_of_this_commands_own_is_not_a_lost_race():
    (cfg,) = resolve_runs(FLAGS)
    assert lost_the_lock([{"run": cfg.run_name(), "status": "failed", "error": "diverged at round 1"}], [cfg]) == []
