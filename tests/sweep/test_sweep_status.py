"""``sweep --status``: a run's state in the store, a damaged run.json shown as one."""
from __future__ import annotations

import json

import pytest

from collapse_lab.sweep.status import store_state
from collapse_lab.config import RunConfig
from collapse_lab.errors import CollapseLabError
from collapse_lab.store import run_path


def _run(store, meta):
    cfg = RunConfig(rounds=4)
    path = run_path(store, cfg)
    path.mkdir(parents=True)
    (path / "run.json").write_text(meta)
    return cfg


def test_a_damaged_run_json_is_a_state_and_a_missing_run_is_another(tmp_path):
    assert store_state(tmp_path, RunConfig(rounds=4)) == "missing"
    assert store_state(tmp_path, _run(tmp_path, '{"rounds": 4, "rounds_compl')) == "unreadable"


def test_only_a_damaged_run_is_unreadable_a_bug_is_not_hidden(tmp_path, monkeypatch):
    cfg = _run(tmp_path, json.dumps({"rounds": 4}))
    monkeypatch.setattr("collapse_lab.store.RunDir.meta", property(lambda self: 1 / 0))
    with pytest.raises(ZeroDivisionError):
        store_state(tmp_path, cfg)
    monkeypatch.setattr("collapse_lab.store.RunDir.meta", property(lambda self: (_ for _ in ()).throw(
        CollapseLabError("run.json is unreadable"))))
    assert store_state(tmp_path, cfg) == "unreadable"
