"""The one run filter (collapse_lab/where.py) that runs --where, open_store and a catalogue
panel's where share: values, not spellings, the same answer from text or a Python value."""
from __future__ import annotations

import math

import pytest

from collapse_lab.where import value_matches


@pytest.mark.parametrize("stored,given,field,want", [
    ("0.5", "0.50", "alpha", True), ("0.5", "5e-1", "alpha", True), ("0.5", 0.5, "alpha", True),
    ("inf", "iid", "alpha", True), ("inf", math.inf, "alpha", True), ("0.05", "0.5", "alpha", False),
    (0.01, "1e-2", "lr", True), (0.01, 0.010000000000000002, "lr", True), (0.01, 0.02, "lr", False),
    (10, "10.0", "clients", True), (10, 10, "clients", True), (10, 11, "clients", False),
    (True, "true", "local_eval", True), (True, True, "local_eval", True), (False, 0, "local_eval", False),
    (None, "none", "tag", True), ("", "", "tag", True), ("moon", "moon", "method", True), ("moon", "MOON", "method", False),
    ({"max_train_per_class": 300}, '{"max_train_per_class": 300}', "dataset_options", True),
    ({"max_train_per_class": 300}, {"max_train_per_class": 300}, "dataset_options", True),
    (float("nan"), "nan", "lr", True)])
def test_values_not_spellings(stored, given, field, want):
    assert value_matches(stored, given, field) is want


def test_the_three_filters_answer_alike(tmp_path):
    """open_store, runs --where and a catalogue where select the same runs for one request."""
    from collapse_lab.analysis.catalogue import matches
    from collapse_lab.api import open_store
    from tests.fixtures import invoke, tiny_train_args

    store = tmp_path / "ck"
    res = invoke("train", *tiny_train_args(epochs=1, rounds=1, clients=3), "--alpha", "0.5", "--alpha", "inf",
                 "--store", store)
    assert res.exit_code == 0, res.output
    for where in ({"alpha": "0.50"}, {"alpha": 0.5}, {"alpha": "iid"}, {"clients": 3}, {"clients": 4}):
        by_api = sorted(r.name for r in open_store(store, **where))
        text = [f"--where={k}={v}" for k, v in where.items()]
        listed = invoke("runs", "--store", store, *text, "--json")
        import json

        by_cli = sorted(r["run"] for r in json.loads(listed.output)) if listed.output.strip().startswith("[") else []
        by_cfg = sorted(r.name for r in open_store(store) if matches(r.config, where))
        assert by_api == by_cli == by_cfg, (where, by_api, by_cli, by_cfg)
