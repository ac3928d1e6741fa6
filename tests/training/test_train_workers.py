"""``train --workers N``: the runs on a pool of processes store the same bytes as one at a
time; what the pool cannot do is one line; the round bar counts the store's rounds."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures import invoke, tiny_train_args

pytestmark = pytest.mark.slow  # worker processes

ARGS = ["train", *tiny_train_args(rounds=3, clients=3), "--alpha", "0.1", "--alpha", "inf", "--seed", "0", "--seed", "1"]


def _bytes(store: Path) -> dict:
    out = {str(f.relative_to(store)): f.read_bytes() for f in sorted(store.rglob("*.safetensors"))}
    for m in sorted(store.glob("*/metrics.jsonl")):
        events = [json.loads(line) for line in m.read_text().splitlines()]
        out[str(m.relative_to(store))] = [{k: v for k, v in e.items() if "seconds" not in k} for e in events]
    return out


def test_two_workers_store_the_bytes_one_at_a_time_stores(tmp_path):
    one = invoke(*ARGS, "--store", tmp_path / "one")
    two = invoke(*ARGS, "--store", tmp_path / "two", "--workers", "2")
    assert one.exit_code == 0 and two.exit_code == 0, two.output
    assert "4 run(s) trained" in two.output and "on 2 worker processes" in two.output
    a, b = _bytes(tmp_path / "one"), _bytes(tmp_path / "two")
    # per run: the partition, round 0, 3 global models and 3 x 3 client models
    assert len([k for k in a if k.endswith(".safetensors")]) == 4 * (1 + 1 + 3 + 3 * 3) and a == b


@pytest.mark.parametrize("extra,words", [(["--workers", "0"], "--workers 0: give 1 or more"),
                                         (["--workers", "2", "--log", "tensorboard", "tb"], "--log writes each round")])
def test_what_the_pool_cannot_do_is_one_line(tmp_path, extra, words):
    res = invoke(*ARGS, "--store", tmp_path / "s", *extra)
    assert res.exit_code == 2 and words in res.output and not (tmp_path / "s").exists()


def test_the_round_bar_counts_what_the_store_holds(tmp_path):
    from collapse_lab.runspec.resolve import resolve_runs
    from collapse_lab.store import run_path
    from collapse_lab.sweep.progress import RoundProgress

    configs = resolve_runs({"dataset": "gaussian", "rounds": 4, "alpha": ("0.1", "inf")}, None)
    for c, done in zip(configs, (4, 2)):  # by hand: one run complete, one halfway; 6 of 8 rounds
        p = run_path(tmp_path, c)
        p.mkdir(parents=True)
        (p / "run.json").write_text(json.dumps({"rounds_complete": done, "rounds": 4, "status": "running"}))
    prog = RoundProgress(tmp_path, configs, disable=True)
    assert prog.done_rounds() == (6, 1)
    with prog as bar:
        assert bar.bar.total == 8 and bar.bar.n == 6
