"""Damaged and mismatched files, the disk-space estimate and refused combinations: each is
one clear line (exit 2) that names the file or the conflict."""
from __future__ import annotations

import shutil
from collections import namedtuple

import pytest

from collapse_lab.tensor_files import load_tensors, save_tensors
from tests.fixtures import invoke
from tests.fixtures import tiny_train_args

FAST = tiny_train_args(epochs=1, rounds=2, clients=3, alpha="0.5")




def one_line_error(res, *parts):
    assert res.exit_code == 2, res.output
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "Traceback" not in res.output
    for p in parts:
        assert p in res.stderr, res.stderr


@pytest.fixture
def store(tmp_path):
    out = tmp_path / "ck"
    assert invoke("train", *FAST, "--store", str(out)).exit_code == 0
    return out, next(p for p in out.iterdir() if not p.name.startswith("."))


def test_truncated_checkpoint_is_named(store, tmp_path):
    out, run = store
    g = run / "round_2" / "global.safetensors"
    g.write_bytes(g.read_bytes()[:100])
    res = invoke("spectrum", "--store", str(out), "--out", str(tmp_path / "fig"))
    one_line_error(res, str(g), "not a readable safetensors file", "truncated or corrupt")


def test_garbage_and_pickle_are_refused(tmp_path):
    p = tmp_path / "x.safetensors"
    p.write_bytes(b"\x80\x04\x95" + b"\x00" * 64)  # the start of a pickle
    with pytest.raises(Exception, match="not a readable safetensors file"):
        load_tensors(p)
    with pytest.raises(Exception, match="no such checkpoint file"):
        load_tensors(tmp_path / "missing.safetensors")


def test_wrong_shape_checkpoint_is_named(store, tmp_path):
    out, run = store
    g = run / "round_2" / "global.safetensors"
    state = load_tensors(g)
    state["classifier.weight"] = state["classifier.weight"][:, :5].contiguous()
    save_tensors(g, state)
    res = invoke("compare", "--store", str(out), "--out", str(tmp_path / "fig"))
    one_line_error(res, str(g), "does not match the run's model", "classifier.weight (10, 5) != (10, 128)")
    # a checkpoint of another model: names differ
    save_tensors(g, {"w": state["classifier.bias"]})
    res = invoke("spectrum", "--store", str(out), "--out", str(tmp_path / "fig"))
    one_line_error(res, "missing body.1.bias", "unexpected w")


def test_a_damaged_checkpoint_of_a_complete_run_is_found_and_resume_recreates_it(store):
    """A truncated client file or a deleted global model in a complete run: plain ``train``
    names the file and says --resume (exit 2, nothing touched); ``--resume`` retrains from the
    round before and every file comes back byte for byte (bit-identical resume on the CPU);
    a damaged round 0 can only be retrained (--overwrite)."""
    import json

    out, run = store
    files = {p: p.read_bytes() for p in sorted(run.rglob("*.safetensors"))}
    c = run / "round_1" / "client_0.safetensors"
    c.write_bytes(c.read_bytes()[:-7])
    res = invoke("train", *FAST, "--store", str(out))
    one_line_error(res, "round_1/client_0.safetensors is truncated", "add --resume")
    assert c.stat().st_size == len(files[c]) - 7
    res = invoke("train", *FAST, "--store", str(out), "--resume")
    assert res.exit_code == 0, res.output
    assert "rounds 1 on are trained again" in res.stderr
    assert {p: p.read_bytes() for p in sorted(run.rglob("*.safetensors"))} == files
    assert json.loads((run / "run.json").read_text())["status"] == "complete"
    (run / "round_2" / "global.safetensors").unlink()
    assert invoke("train", *FAST, "--store", str(out), "--resume").exit_code == 0
    assert {p: p.read_bytes() for p in sorted(run.rglob("*.safetensors"))} == files
    (run / "round_0" / "global.safetensors").write_bytes(b"garbage")
    res = invoke("train", *FAST, "--store", str(out), "--resume")
    one_line_error(res, "round_0/global.safetensors is truncated", "--overwrite retrains the run")


def test_disk_estimate_refuses_and_suggests_keep_local(tmp_path, monkeypatch):
    Usage = namedtuple("Usage", "total used free")
    # mlp on dim 8: 36,490 parameters -> 145,960 bytes per checkpoint; 10 clients x 30 rounds
    # with --keep-local all is (31 + 300) checkpoints = 0.048 GB; every:10 keeps the clients
    # of rounds 10, 20, 30: (31 + 30) checkpoints = 0.0089 GB, which fits in 0.01 GB
    monkeypatch.setattr(shutil, "disk_usage", lambda p: Usage(10**9, 10**9 - 10**7, 10**7))
    args = [*FAST[:-6], "--rounds", "30", "--clients", "10", "--alpha", "0.5"]
    res = invoke("train", *args, "--store", str(tmp_path / "ck"))
    one_line_error(res, "would write about 48.3 MB", "only 10.0 MB is free", "--keep-local every:10 would need about 8.9 MB")
    assert not (tmp_path / "ck").exists()
    monkeypatch.setattr(shutil, "disk_usage", lambda p: Usage(10**9, 10**9 - 10**5, 10**5))
    res = invoke("train", *args, "--store", str(tmp_path / "ck"))
    one_line_error(res, "even --keep-local none does not fit")


def test_keep_local_last_counts_the_two_rounds_of_client_files_that_coexist(tmp_path):
    """With --keep-local last, round r-1's clients are removed only once round r is
    complete, so the peak holds two rounds of client files (the disk-full case of issue 29)."""
    from collapse_lab.config import RunConfig
    from collapse_lab.runspec.resolve import finalize
    from collapse_lab.training.disk import estimate_bytes
    from collapse_lab.training.prepare import prepare

    base = dict(dataset="gaussian", dataset_options={"dim": 8, "train_per_class": 30, "test_per_class": 10},
                rounds=5, clients=4, local_epochs=1, batch_size=16, alpha=0.5)
    (p,) = prepare([finalize(RunConfig(**base, keep_local="last"))], tmp_path)
    assert estimate_bytes(p) == (5 + 1 + 2 * 4) * p.state_bytes
    (p,) = prepare([finalize(RunConfig(**base, keep_local="none"))], tmp_path)
    assert estimate_bytes(p) == (5 + 1 + 1 * 4) * p.state_bytes


def test_estimate_matches_what_a_run_writes(tmp_path):
    from collapse_lab.config import RunConfig
    from collapse_lab.training.engine import train
    from collapse_lab.runspec.resolve import finalize
    from collapse_lab.training.disk import estimate_bytes
    from collapse_lab.training.prepare import prepare

    cfg = RunConfig(dataset="gaussian", dataset_options={"dim": 8, "train_per_class": 30, "test_per_class": 10},
                    rounds=3, clients=3, local_epochs=1, batch_size=16, alpha=0.5, method="scaffold")
    (p,) = prepare([finalize(cfg)], tmp_path)
    est = estimate_bytes(p)
    train(p)
    written = sum(f.stat().st_size for f in p.path.rglob("*.safetensors") if f.name != "partition.safetensors")
    # the estimate counts tensor bytes; files add a small header each
    assert est <= written <= est * 1.05, (est, written)


def test_bad_combinations_are_refused(store, tmp_path):
    out, run = store
    other = tmp_path / "other"
    assert invoke("train", "--preset", "quick", "--alpha", "0.5", "--store", str(other)).exit_code == 0
    (digits_run,) = [p for p in other.iterdir() if not p.name.startswith(".")]
    res = invoke("spectrum", "--run", str(run), "--run", str(digits_run), "--out", str(tmp_path / "fig"))
    one_line_error(res, "the selected runs mix datasets (digits, gaussian); choose one with --dataset")
    res = invoke("train", *FAST, "--store", str(out), "--resume", "--overwrite")
    one_line_error(res, "--resume and --overwrite contradict each other")


def test_resume_checks_the_partition_hash(store):
    import json

    out, run = store
    meta = json.loads((run / "run.json").read_text())
    meta.update(status="running", rounds_complete=1, partition_hash="0" * 64)
    (run / "run.json").write_text(json.dumps(meta))
    res = invoke("train", *FAST, "--store", str(out), "--resume")
    one_line_error(res, "differs from the stored one (000000000000)", "cannot be resumed")
