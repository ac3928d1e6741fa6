"""--keep-global: which rounds keep their global model (issue 38). The rule by hand, the
files a trained run holds, a resume and an extension from a run that kept only its last
round (equal byte for byte to a run that kept everything), the byte estimate against the
files written, and the catalogue's policy: each run keeps what the entries reading it read."""
from __future__ import annotations

from pathlib import Path

import pytest

from collapse_lab.errors import CollapseLabError
from collapse_lab.store import keeps_global, parse_keep_global
from tests.fixtures import invoke, tiny_train_args

ARGS = tiny_train_args(per_class=20, test_per_class=5, epochs=1, clients=3, alpha="0.5")


def test_the_rule_by_hand():
    assert parse_keep_global("all") == ("all", 0) and parse_keep_global("every:3") == ("every", 3)
    for bad in ("none", "every:0", "every:x", "some"):
        with pytest.raises(CollapseLabError, match="--keep-global"):
            parse_keep_global(bad)
    # after round 5 of 7 is complete: every:2 keeps 0, 2, 4 and the latest (5); last only 5
    assert [q for q in range(6) if keeps_global(("every", 2), q, 5, 7)] == [0, 2, 4, 5]
    assert [q for q in range(6) if keeps_global(("last", 0), q, 5, 7)] == [5]
    assert [q for q in range(8) if keeps_global(("every", 3), q, 7, 7)] == [0, 3, 6, 7]


def files(store: Path) -> list[str]:
    (run,) = [p for p in store.iterdir() if (p / "run.json").is_file()]
    return sorted(str(p.relative_to(run)) for p in run.rglob("*.safetensors"))


@pytest.mark.parametrize("keep,rounds", [("every:2", [0, 2, 4, 5]), ("last", [5])])
def test_a_run_holds_the_rounds_its_policy_keeps_and_is_complete(tmp_path, keep, rounds):
    res = invoke("train", *ARGS, "--rounds", 5, "--keep-global", keep, "--keep-local", "none", "--store", tmp_path)
    assert res.exit_code == 0, res.output
    assert files(tmp_path) == ["partition.safetensors"] + [f"round_{r}/global.safetensors" for r in rounds]
    assert not (tmp_path / next(tmp_path.iterdir()).name / "round_1").exists()  # emptied round folders go
    again = invoke("train", *ARGS, "--rounds", 5, "--keep-global", keep, "--keep-local", "none", "--store", tmp_path)
    assert again.exit_code == 0 and "0 run(s) trained" in again.output  # whole: not a damaged run


def test_resume_and_extension_from_the_last_round_equal_a_run_that_kept_everything(tmp_path):
    full = invoke("train", *ARGS, "--rounds", 6, "--store", tmp_path / "all")
    assert full.exit_code == 0, full.output
    short = invoke("train", *ARGS, "--rounds", 3, "--keep-global", "last", "--keep-local", "none",
                   "--store", tmp_path / "last")
    longer = invoke("train", *ARGS, "--rounds", 6, "--keep-global", "last", "--keep-local", "none", "--resume",
                    "--store", tmp_path / "last")
    assert short.exit_code == 0 and longer.exit_code == 0, longer.output
    assert files(tmp_path / "last") == ["partition.safetensors", "round_6/global.safetensors"]
    a = next((tmp_path / "all").iterdir()) / "round_6" / "global.safetensors"
    b = next((tmp_path / "last").iterdir()) / "round_6" / "global.safetensors"
    assert a.read_bytes() == b.read_bytes()


def test_the_estimate_counts_the_files_written(tmp_path):
    from collapse_lab.plan.estimate import kept_checkpoints
    from collapse_lab.store import RunDir

    for keep in ("all", "every:2", "last"):
        store = tmp_path / keep.replace(":", "")
        res = invoke("train", *ARGS, "--rounds", 5, "--keep-global", keep, "--keep-local", "last", "--store", store)
        assert res.exit_code == 0, res.output
        run = RunDir(next(store.iterdir()))
        assert kept_checkpoints(run.config) == len(files(store)) - 1  # all but the partition


def test_the_catalogue_keeps_what_its_entries_read():
    from collapse_lab.analysis.catalogue import Entry
    from collapse_lab.catalogue.planning import GLOBAL_ORDER, LOCAL_ORDER, wider

    table = Entry(name="t", paper="", source="", kind="table", renderer="table", caption="", runs={}, params={})
    local = Entry(name="l", paper="", source="", kind="figure", renderer="local_global", caption="", runs={}, params={})
    at_round = Entry(name="r", paper="", source="", kind="figure", renderer="spectra", caption="", runs={},
                     params={"panels": [{"where": {}, "round": 3}]})
    assert table.keeps() == ("last", "none") and local.keeps() == ("last", "last") and at_round.keeps()[0] == "all"
    assert wider("last", "every:5", GLOBAL_ORDER) == "every:5" and wider("every:5", "every:2", GLOBAL_ORDER) == "all"
    assert wider("none", "last", LOCAL_ORDER) == "last" and wider("all", "none", LOCAL_ORDER) == "all"


def test_a_reader_keeps_the_model_it_started_on_when_the_writer_prunes_its_round_meanwhile(tmp_path):
    """The reader's race under ``--keep-global last``: the writer completes a round and
    prunes the one a reader has begun (between its cache lookup and its model). The reader
    finishes on the tensors it read under the lock: the same representation as before the
    prune; a new reader is told the round was pruned."""
    import torch

    from collapse_lab.analysis.features import FeatureSource
    from collapse_lab.store import RunDir, parse_keep_local

    assert invoke("train", *ARGS, "--rounds", 2, "--store", tmp_path).exit_code == 0
    run = RunDir(next(p for p in tmp_path.iterdir() if (p / "run.json").is_file()))
    want = FeatureSource(use_cache=False).features(run, 1)
    fs = FeatureSource(use_cache=False)
    build = fs.architecture

    def prune_then_build(cfg, ds):  # the writer's prune, in the reader's window
        run.prune(2, parse_keep_global("last"), parse_keep_local("all"), 2)
        return build(cfg, ds)

    fs.architecture = prune_then_build
    got = fs.features(run, 1)
    assert not run.has_global(1) and torch.equal(got, want)
    with pytest.raises(CollapseLabError, match="round 1's global model was not kept"):
        FeatureSource(use_cache=False).features(run, 1)


def test_spectrum_s_default_round_gives_way_to_the_runs_new_last_when_its_pick_was_pruned(tmp_path):
    """``spectrum`` without --round reads a run's last round; when the writer completed
    another and pruned the one picked before the reader opened it, the new last is read
    (an explicit --round keeps retention's own line)."""
    import torch

    from collapse_lab.analysis.features import FeatureSource
    from collapse_lab.analysis.spectrum_view import latest_features
    from collapse_lab.store import RunDir, parse_keep_local

    assert invoke("train", *ARGS, "--rounds", 2, "--store", tmp_path).exit_code == 0
    run = RunDir(next(p for p in tmp_path.iterdir() if (p / "run.json").is_file()))
    want = FeatureSource(use_cache=False).features(run, 2)
    run.prune(2, parse_keep_global("last"), parse_keep_local("all"), 2)  # round 1 was picked, then pruned
    r, z = latest_features(FeatureSource(use_cache=False), run, 1, None, default=True)
    assert r == 2 and torch.equal(z, want)
    with pytest.raises(CollapseLabError, match="round 1's global model was not kept"):
        latest_features(FeatureSource(use_cache=False), run, 1, None, default=False)
