"""Retention is a view, never a trap (issue 47): changing --keep-global/--keep-local on a
resume or a rerun never strands a run, never deletes what was kept without a line, and a
pruned round is named as pruned, not damaged."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collapse_lab.config import RunConfig
from collapse_lab.store import RunDir
from collapse_lab.store.integrity import first_damage
from collapse_lab.training.sampling import sample_clients
from tests.fixtures import invoke, tiny_train_args

ARGS = tiny_train_args(epochs=1, clients=3, alpha="0.5", device="cpu")


def _train(store: Path, rounds: int, *extra: str):
    return invoke("train", *ARGS, "--store", store, "--rounds", rounds, *extra)


def _run(store: Path) -> RunDir:
    (path,) = [p for p in store.iterdir() if (p / "run.json").is_file()]
    return RunDir(path)


def _globals(run: RunDir) -> list[int]:
    return [q for q in run.rounds_on_disk() if run.global_path(q).is_file()]


@pytest.mark.slow
def test_last_then_all_then_last_reopens_and_extends(tmp_path):
    """The issue's sequence: 2 rounds under last, extended to 4 under all; then the same
    command, with last, and --resume all reopen the complete run (skipped), and a later
    extension under last deletes only what the rounds trained then supersede."""
    assert _train(tmp_path, 2, "--keep-global", "last").exit_code == 0
    ext = _train(tmp_path, 4, "--resume", "--keep-global", "all")
    assert ext.exit_code == 0, ext.output
    assert "--keep-global all (was last) applies to the rounds trained from now on (3 on)" in ext.stderr
    run = _run(tmp_path)
    assert _globals(run) == [2, 3, 4] and run.pruned()["global"] == {0, 1}
    for extra in ((), ("--keep-global", "last"), ("--resume",)):
        again = _train(tmp_path, 4, *extra)
        assert again.exit_code == 0 and "already complete" in again.stderr, (extra, again.output)
        assert ("is not applied to its stored rounds (nothing is deleted)" in again.stderr) == bool(extra[:1] == ("--keep-global",))
        assert _globals(run) == [2, 3, 4]
    more = _train(tmp_path, 6, "--resume", "--keep-global", "last")
    assert more.exit_code == 0 and "--keep-global last (was all)" in more.stderr, more.output
    assert _globals(run) == [2, 3, 4, 6] and first_damage(run, lambda r: sample_clients(run.config, r), 6) is None
    # a pruned round is named as pruned; a deleted file that was not pruned is damage
    res = invoke("spectrum", "--store", tmp_path, "--round", "5", "--out", tmp_path / "fig")
    assert res.exit_code == 2 and "was not kept (pruned by --keep-global" in res.stderr and "[2, 3, 4, 6]" in res.stderr
    run.global_path(3).unlink()
    assert first_damage(run, lambda r: sample_clients(run.config, r), 6)[0] == 3


def test_none_then_all_is_not_damage(tmp_path):
    assert _train(tmp_path, 2, "--keep-local", "none").exit_code == 0
    ext = _train(tmp_path, 4, "--resume", "--keep-local", "all")
    assert ext.exit_code == 0 and "--keep-local all (was none)" in ext.stderr, ext.output
    run = _run(tmp_path)
    assert run.pruned()["local"] == {1, 2} and first_damage(run, lambda r: sample_clients(run.config, r), 4) is None
    again = _train(tmp_path, 4)
    assert again.exit_code == 0 and "already complete" in again.stderr, again.output


def test_a_run_stored_before_the_record_reads_by_its_policy(tmp_path):
    """A run written before ``pruned`` existed: its recorded policy says what went; resuming
    it under another policy records that first, so its rounds are not called damaged."""
    assert _train(tmp_path, 2, "--keep-global", "last").exit_code == 0
    run = _run(tmp_path)
    meta = json.loads((run.path / "run.json").read_text())
    del meta["pruned"]
    (run.path / "run.json").write_text(json.dumps(meta))
    assert run.pruned()["global"] == {0, 1} and first_damage(run, lambda r: sample_clients(run.config, r), 2) is None
    ext = _train(tmp_path, 3, "--resume", "--keep-global", "all")
    assert ext.exit_code == 0, ext.output
    assert _globals(run) == [2, 3] and first_damage(run, lambda r: sample_clients(run.config, r), 3) is None


POLICIES_G = ["all", "last", "every:2"]
POLICIES_L = ["all", "last", "none", "every:2"]


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(st.integers(0, 2), st.sampled_from(POLICIES_G), st.sampled_from(POLICIES_L),
                                st.booleans()), min_size=2, max_size=4))
def test_retention_changes_in_any_order_never_strand_a_run(tmp_path_factory, steps):
    """Random extensions, reruns and resumes under random policies: every command exits 0,
    the complete run always reopens, nothing the current record keeps is missing, the
    latest round always has its global model, and a policy's rounds follow it."""
    store = tmp_path_factory.mktemp("ret")
    rounds = 1
    assert _train(store, rounds).exit_code == 0
    for add, kg, kl, resume in steps:
        rounds += add
        res = _train(store, rounds, "--keep-global", kg, "--keep-local", kl, *(("--resume",) if resume or add else ()))
        assert res.exit_code == 0, (steps, res.output)
        run = _run(store)
        meta = run.meta
        assert meta["status"] == "complete" and meta["rounds_complete"] == rounds
        assert first_damage(run, lambda r: sample_clients(run.config, r), rounds) is None, steps
        gone = run.pruned()
        assert run.global_path(rounds).is_file() and rounds not in gone["global"]
        cfg = RunConfig.from_json(meta)
        for q in range(rounds + 1):
            assert run.global_path(q).is_file() == (q not in gone["global"]), (steps, q)
            if q >= 1:
                have = all(run.client_path(q, k).is_file() for k in sample_clients(cfg, q))
                assert have == (q not in gone["local"]), (steps, q)
        if add:  # the rounds trained now follow the policy given now
            since = int(meta.get("retention_from", 0))
            for q in range(max(since, 1), rounds):
                keep_g = kg == "all" or (kg.startswith("every") and q % 2 == 0)
                assert run.global_path(q).is_file() == keep_g, (steps, q)


def test_a_reader_never_reads_a_round_while_it_is_pruned(tmp_path):
    """A reader waits while the writer holds the prune lock; once the writer has pruned the
    round, the reader names it as pruned (not missing)."""
    import threading

    from collapse_lab.analysis.features import FeatureSource
    from collapse_lab.store import retention

    assert _train(tmp_path, 2, "--keep-global", "last").exit_code == 0
    run = _run(tmp_path)
    out = {}

    def read():
        try:
            out["z"] = FeatureSource(device="cpu", use_cache=False).features(run, 2)
        except Exception as e:  # noqa: BLE001 -- what the reader met
            out["error"] = e

    with retention._flock(run.path, exclusive=True):  # the writer, mid-prune
        t = threading.Thread(target=read)
        t.start()
        t.join(0.5)
        assert t.is_alive() and not out  # waiting, nothing read
        run.update(pruned={"global": [0, 1, 2], "local": []})
        run.global_path(2).unlink()
    t.join(30)
    assert "was not kept (pruned by --keep-global" in str(out["error"])
