"""Faults of the file system (issue 29): a full disk under training, the analyses, the
figures and the ladder, a read-only store, run folder or output. Mounts: in the slow set;
they skip where the machine does not allow ``mount`` (not root, no CAP_SYS_ADMIN)."""
from __future__ import annotations

import importlib.util
import json
import subprocess

import pytest
from click.testing import CliRunner

from collapse_lab.cli import cli

from tests.fault_tools import GAUSS, REPO, one_error_line, round_events, tree_digest

pytestmark = pytest.mark.slow


@pytest.fixture
def tmpfs(tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mnt)], check=True,
                       capture_output=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as e:
        pytest.skip(f"mount -t tmpfs is not allowed here ({type(e).__name__}); needs root with CAP_SYS_ADMIN")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_a_full_disk_is_one_line_and_the_run_resumes(tmpfs, monkeypatch):
    import shutil
    from collections import namedtuple

    store = tmpfs / "ck"
    # digits' mlp: 0.18 MB a checkpoint, 10 clients: about 2 MB a round; the estimate is told
    # there is room, so the disk fills mid-run
    Usage = namedtuple("Usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: Usage(10**12, 0, 10**12))
    res = CliRunner().invoke(cli, ["train", "--alpha", "0.5", "--local-epochs", "1", "--probe", "0", "--rounds", "6",
                                   "--store", str(store)])
    assert res.exit_code == 1 and "Traceback" not in res.output
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith(("error", "internal"))]
    assert len(errors) == 1 and errors == res.stderr.strip().splitlines()[-1:], res.stderr  # after the round log
    assert "the disk is full" in errors[0] and "--resume" in errors[0], errors
    (run,) = [p for p in store.iterdir() if not p.name.startswith(".")]
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "running"
    subprocess.run(["mount", "-o", "remount,size=40m", str(tmpfs)], check=True)
    res = CliRunner().invoke(cli, ["train", "--alpha", "0.5", "--local-epochs", "1", "--probe", "0", "--rounds", "6",
                                   "--store", str(store), "--resume"])
    assert res.exit_code == 0, res.output
    assert json.loads((run / "run.json").read_text())["status"] == "complete"
    assert round_events(run) == list(range(7))


_NO_TENSORBOARD = importlib.util.find_spec("tensorboard") is None


@pytest.mark.parametrize("args", [
    ["spectrum", "--out", "OUT/fig"], ["layers", "--out", "OUT/lay"], ["report", "--html", "OUT/rep/r.html"],
    pytest.param(["export", "tensorboard", "--out", "OUT/tb"], marks=pytest.mark.skipif(
        _NO_TENSORBOARD, reason="export tensorboard needs the tensorboard extra (pip install -e '.[tensorboard]')")),
    ["compare", "--out", "OUT/cmp"]])
def test_a_full_disk_under_an_analysis_writer_is_one_line_and_leaves_nothing(tmpfs, tmp_path, args):
    """Every writer but training on a full disk: one line naming the path and what to do (not
    training's --resume), exit 1, and nothing left there: no file, no empty folder."""
    store = tmp_path / "ck"
    res = CliRunner().invoke(cli, ["train", *GAUSS, "--rounds", "1", "--store", str(store), "--keep-local", "all"])
    assert res.exit_code == 0, res.output
    filler = tmpfs / "filler"
    with open(filler, "wb", buffering=0) as f:  # the tmpfs (3 MB) filled to the last byte
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass
    res = CliRunner().invoke(cli, [a.replace("OUT", str(tmpfs)) for a in args] + ["--store", str(store)])
    out = str(tmpfs / args[-1].split("/")[1])
    assert res.exit_code == 1, res.output
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith(("error", "internal", "Traceback"))]
    assert errors == res.stderr.strip().splitlines()[-1:], res.stderr  # one line, after any progress
    assert ("the disk is full writing " + out) in errors[0] and "free some space there and run the command again" in errors[0]
    assert "--resume" not in res.stderr and "internal error" not in res.output
    assert sorted(p.name for p in tmpfs.iterdir()) == ["filler"]


def test_a_disk_that_fills_between_two_figures_leaves_neither(tmpfs, tmp_path):
    """``layers`` writes two figures; with room for the first and not the second it ends in
    one line, exit 1, and the first figure is removed too: the folder is as it was."""
    import os

    store, probe = tmp_path / "ck", tmp_path / "probe"
    assert CliRunner().invoke(cli, ["train", *GAUSS, "--rounds", "1", "--store", str(store)]).exit_code == 0
    res = CliRunner().invoke(cli, ["layers", "--store", str(store), "--out", str(probe)])
    assert res.exit_code == 0, res.output
    sizes = {p.name: p.stat().st_size for p in probe.iterdir()}
    first = sum(v for k, v in sizes.items() if "_spectra" not in k)
    room = first + 8 * 4096 + min(v for k, v in sizes.items() if "_spectra" in k) // 2
    assert room < sum(sizes.values()), sizes
    filler = tmpfs / "filler"
    with open(filler, "wb", buffering=0) as f:  # the tmpfs filled, then room for the first figure left
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass
    os.truncate(filler, max(0, filler.stat().st_size - room))
    res = CliRunner().invoke(cli, ["layers", "--store", str(store), "--out", str(tmpfs / "lay")])
    assert res.exit_code == 1, res.output
    assert "the disk is full writing" in res.stderr.strip().splitlines()[-1], res.stderr
    assert sorted(p.name for p in tmpfs.iterdir()) == ["filler"]


def test_a_read_only_store_is_analysed_and_refused_for_training(tmpfs, tmp_path):
    subprocess.run(["mount", "-o", "remount,size=40m", str(tmpfs)], check=True)
    store = tmpfs / "ck"
    args = [*GAUSS, "--rounds", "2", "--store", str(store)]
    assert CliRunner().invoke(cli, ["train", *args]).exit_code == 0
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True)
    try:
        before = tree_digest(store)
        res = CliRunner().invoke(cli, ["spectrum", "--store", str(store), "--out", str(tmp_path / "fig"), "--json"])
        assert res.exit_code == 0, res.output
        assert res.stderr.count("without the feature cache") == 1  # said once
        res = CliRunner().invoke(cli, ["report", "--store", str(store), "--html", str(tmp_path / "r.html")])
        assert res.exit_code == 0, res.output
        res = CliRunner().invoke(cli, ["train", *GAUSS, "--rounds", "3", "--store", str(store), "--resume"])
        one_error_line(res, 2, "is not writable")
        assert tree_digest(store) == before
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(tmpfs)], capture_output=True)


def test_a_read_only_run_folder_in_a_writable_store_is_refused_as_a_read_only_store_is(tmp_path):
    """A run folder on a read-only mount inside a writable store: --resume and --overwrite
    are one line naming --store and the folder, exit 2 (as a read-only store), before any
    work and with nothing changed there; a complete run is still skipped (exit 0)."""
    store = tmp_path / "ck"
    assert CliRunner().invoke(cli, ["train", *GAUSS, "--rounds", "2", "--store", str(store)]).exit_code == 0
    (run,) = [p for p in store.iterdir() if not p.name.startswith(".")]
    try:
        subprocess.run(["mount", "--bind", str(run), str(run)], check=True, capture_output=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as e:
        pytest.skip(f"mount --bind is not allowed here ({type(e).__name__}); needs root with CAP_SYS_ADMIN")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(run)], check=True, capture_output=True)
        before = tree_digest(store)
        for extra in (["--rounds", "3", "--resume"], ["--rounds", "2", "--overwrite"]):
            res = CliRunner().invoke(cli, ["train", *GAUSS, "--store", str(store), *extra])
            one_error_line(res, 2, "--store: the run folder")
            assert "is not writable (Read-only file system)" in res.stderr
            assert tree_digest(store) == before
        res = CliRunner().invoke(cli, ["train", *GAUSS, "--rounds", "2", "--store", str(store)])
        assert res.exit_code == 0 and "skipped (complete)" in res.output, res.output
    finally:
        subprocess.run(["umount", "-l", str(run)], capture_output=True)


def test_a_read_only_out_is_refused_before_any_work(tmpfs, tmp_path):
    """Every command that writes figures or pages into --out (report: its page, --html) checks
    the folder when it parses: one line naming the option, exit 2, no work done (thm1's simulations, the layers' forward
    passes), nothing written; --list and --dry-run, which write nothing, still answer."""
    store = tmp_path / "ck"
    assert CliRunner().invoke(cli, ["train", *GAUSS, "--rounds", "1", "--store", str(store)]).exit_code == 0
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True)
    try:
        out = str(tmpfs / "out")
        for args in (["spectrum", "--store", str(store), "--out", out], ["compare", "--store", str(store), "--out", out],
                     ["layers", "--store", str(store), "--out", out], ["cka", "--store", str(store), "--out", out],
                     ["nc", "--store", str(store), "--out", out], ["report", "--store", str(store), "--html", out + ".html"],
                     ["figures", "feddecorr-fig2", "--no-train", "--store", str(store), "--out", out],
                     ["tables", "feddecorr-table1", "--no-train", "--store", str(store), "--out", out],
                     ["ladder", "feddecorr-fig2", "--no-train", "--store", str(store), "--out", out],
                     ["theory", "thm1", "--out", out], ["theory", "align", "--out", out]):
            res = CliRunner().invoke(cli, args)
            one_error_line(res, 2, "--html" if args[0] == "report" else "--out", "is not writable")
        for extra in ("--list", "--dry-run"):
            assert CliRunner().invoke(cli, ["figures", "feddecorr-fig2", extra, "--out", out]).exit_code == 0
        assert not list(tmpfs.iterdir())
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(tmpfs)], capture_output=True)


def test_a_full_disk_under_ladder_no_train_is_one_line_and_leaves_only_the_records(tmpfs, tmp_path, monkeypatch):
    """``ladder --no-train --out`` on a full disk (its kept record already there): one line
    naming the file and what to free, exit 1, no LADDER.md, csv, json or png left behind."""
    import shutil

    monkeypatch.delenv("COLLAPSE_LAB_DATA", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    rungs = tmp_path / "rungs.yaml"
    rungs.write_text("rungs:\n- name: cpu\n  entries: [feddecorr-fig2]\n")
    out = tmpfs / "lad"
    (out / "records").mkdir(parents=True)
    shutil.copy(REPO / "docs" / "scale" / "b" / "records" / "cpu--feddecorr-fig2.json", out / "records")
    with open(tmpfs / "filler", "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass
    res = CliRunner().invoke(cli, ["ladder", "feddecorr-fig2", "--rungs", str(rungs), "--no-train", "--out", str(out),
                                   "--store", str(tmp_path / "empty")])
    assert res.exit_code == 1, res.output
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith(("error", "internal", "Traceback"))]
    assert errors == res.stderr.strip().splitlines()[-1:], res.stderr
    assert f"the disk is full writing {out}" in errors[0] and "free some space there" in errors[0], errors
    assert sorted(p.relative_to(tmpfs).as_posix() for p in tmpfs.rglob("*")) == [
        "filler", "lad", "lad/records", "lad/records/cpu--feddecorr-fig2.json"]
