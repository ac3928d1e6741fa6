"""Faults that lose data if handled wrong (issue 29): a second writer on a run, SIGTERM to
train and to a sweep (no orphaned worker), a tag that points outside the store, a full
disk and a read-only store. Subprocesses and mounts: in the slow set; the mount tests skip
where the machine does not allow ``mount`` (not root, no CAP_SYS_ADMIN)."""
from __future__ import annotations

import hashlib
import importlib.util
import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from collapse_lab.cli import cli

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

GAUSS = ["--dataset", "gaussian", "--dataset-option", "dim=8", "--dataset-option", "train_per_class=30",
         "--dataset-option", "test_per_class=5", "--clients", "3", "--local-epochs", "1", "--batch-size", "8",
         "--alpha", "0.5", "--probe", "0"]
# digits, 2 local epochs: about 0.06 s a round on 2 cores, so 3000 rounds outlive every check
LONG = ["--alpha", "0.5", "--local-epochs", "2", "--probe", "0", "--rounds", "3000"]


def cli_proc(*args, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "collapse_lab.entry", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def sigterm(proc: subprocess.Popen, timeout: float) -> str:
    """SIGTERM the process and wait for it; its stderr."""
    proc.send_signal(signal.SIGTERM)
    return proc.communicate(timeout=timeout)[1]


def wait_for_round(store: Path, r: int = 1, timeout: float = 60, runs: int = 1) -> list[Path]:
    t0 = time.time()
    while time.time() - t0 < timeout:
        found = []
        for d in store.glob("*/run.json") if store.is_dir() else []:
            try:
                if json.loads(d.read_text())["rounds_complete"] >= r:
                    found.append(d.parent)
            except (ValueError, KeyError, OSError):
                pass
        if len(found) >= runs:
            return found
        time.sleep(0.2)
    raise AssertionError(f"no run in {store} reached round {r} within {timeout} s")


def round_events(run: Path) -> list[int]:
    return [json.loads(line)["round"] for line in (run / "metrics.jsonl").read_text().splitlines()
            if '"event": "round"' in line]


def tree_digest(folder: Path) -> dict:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def one_error_line(res, code: int, *parts: str) -> None:
    assert res.exit_code == code, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    for p in parts:
        assert p in lines[0], lines[0]


def test_a_second_writer_is_refused_and_sigterm_stops_cleanly(tmp_path):
    store = tmp_path / "ck"
    first = cli_proc("train", *LONG, "--store", store)
    try:
        (run,) = wait_for_round(store)
        before = tree_digest(run / "round_0")
        for extra in ([], ["--resume"], ["--overwrite"]):
            res = CliRunner().invoke(cli, ["train", *LONG, "--store", str(store), *extra])
            one_error_line(res, 2, "is being written by another collapse-lab process", f"(pid {first.pid} on {socket.gethostname()})")
        assert tree_digest(run / "round_0") == before  # the second process touched nothing
        err = sigterm(first, 60)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 143, err
    assert "SIGTERM: stopped" in err and "--resume" in err and "Traceback" not in err
    meta = json.loads((run / "run.json").read_text())
    done = meta["rounds_complete"]
    assert meta["status"] == "running" and done >= 1
    rounds = round_events(run)
    assert rounds == list(range(done + 1))  # every event once: no second writer appended
    # the lock died with the process: a resume to a shorter length is allowed at once
    res = CliRunner().invoke(cli, ["train", *LONG[:-1], str(done + 2), "--store", str(store), "--resume"])
    assert res.exit_code == 0, res.output
    assert round_events(run) == list(range(done + 3))


def test_a_lock_of_a_killed_process_never_blocks(tmp_path):
    store = tmp_path / "ck"
    first = cli_proc("train", *LONG, "--store", store)
    (run,) = wait_for_round(store)
    first.kill()
    first.wait()
    assert (store / ".locks" / f"{run.name}.lock").is_file()
    res = CliRunner().invoke(cli, ["train", *LONG[:-1], "3", "--store", str(store), "--resume"])
    assert res.exit_code == 0, res.output
    assert json.loads((run / "run.json").read_text())["status"] == "complete"


def _workers_of(store: Path) -> list[int]:
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"collapse_lab.sweep.worker" in cmd and str(store).encode() in cmd:
                pids.append(int(d.name))
    return pids


def _sigterm_after_round(store: Path, workers: int, *args) -> tuple[list[Path], int, str]:
    """Start the command, wait until ``workers`` runs have a round (each with a live worker
    process), SIGTERM it; (the runs, its exit status, its stderr)."""
    proc = cli_proc(*args)
    try:
        runs = wait_for_round(store, 1, runs=workers, timeout=120)
        assert len(_workers_of(store)) == workers
        err = sigterm(proc, 120)
    finally:
        if proc.poll() is None:
            proc.kill()
    return runs, proc.returncode, err


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to find the worker processes")
def test_sigterm_to_a_sweep_stops_its_workers_and_the_rerun_completes(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text("base: {local_epochs: 2, probe: 0, rounds: 400}\ngrid: {alpha: [0.5, inf]}\n")
    store = tmp_path / "ck"
    runs, code, err = _sigterm_after_round(store, 2, "sweep", spec, "--store", store, "--workers", "2")
    assert code == 143, err
    assert "sweep interrupted (SIGTERM)" in err and "continue with: collapse-lab" in err and "Traceback" not in err
    time.sleep(0.5)
    assert _workers_of(store) == []  # none orphaned
    done = {r: json.loads((r / "run.json").read_text())["rounds_complete"] for r in runs}
    for r in runs:  # each worker stored its current client and stopped: nothing beyond the last round
        assert round_events(r) == list(range(done[r] + 1))
    spec.write_text("base: {local_epochs: 2, probe: 0, rounds: %d}\ngrid: {alpha: [0.5, inf]}\n" % (max(done.values()) + 2))
    res = CliRunner().invoke(cli, ["sweep", str(spec), "--store", str(store), "--workers", "2"])
    assert res.exit_code == 0, res.output
    for r in runs:
        assert round_events(r) == list(range(max(done.values()) + 3))


def test_a_tag_pointing_outside_the_store_touches_nothing(tmp_path):
    victim = tmp_path / "victim"
    (victim / "sub").mkdir(parents=True)
    (victim / "file").write_text("precious")
    (victim / "sub" / "f").write_text("deep")
    before = tree_digest(tmp_path)
    store = tmp_path / "n" / "store"
    for tag in ("../../victim", "../escape", "..", ".hidden", "a/b", "x" * 65, "nul\0"):
        res = CliRunner().invoke(cli, ["train", *GAUSS, "--rounds", "1", "--store", str(store), "--tag", tag])
        one_error_line(res, 2, "--tag")
    assert tree_digest(tmp_path) == before and not store.exists()


def test_overwrite_replaces_only_a_run_folder(tmp_path):
    """A folder under a run's name that is not a run (no run.json), or a symlink to one, is
    never removed."""
    store = tmp_path / "ck"
    res = CliRunner().invoke(cli, ["train", *GAUSS, "--rounds", "1", "--store", str(store)])
    assert res.exit_code == 0
    (run,) = [p for p in store.iterdir() if not p.name.startswith(".")]
    elsewhere = tmp_path / "elsewhere"
    run.rename(elsewhere)
    run.symlink_to(elsewhere)
    before = tree_digest(elsewhere)
    res = CliRunner().invoke(cli, ["train", *GAUSS, "--rounds", "1", "--store", str(store), "--overwrite"])
    one_error_line(res, 2, "is a symbolic link")
    run.unlink()
    run.mkdir()
    (run / "notes.txt").write_text("mine")
    res = CliRunner().invoke(cli, ["train", *GAUSS, "--rounds", "1", "--store", str(store), "--overwrite"])
    one_error_line(res, 2, "is not a collapse-lab run")
    assert (run / "notes.txt").read_text() == "mine" and tree_digest(elsewhere) == before


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


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@pytest.mark.parametrize("moment", ["import", "loaded", "command", "prepared", "step:1:0", "client:1:3"])
def test_ctrl_c_at_any_moment_of_start_up_and_training_is_one_line(tmp_path, moment):
    """SIGINT at a chosen moment (collapse_lab.faults: the process signals itself there, no
    clock): while the modules load, after, once the arguments are parsed, once the runs are
    checked, mid-client and after a client's checkpoint. Each ends in one line, exit 130."""
    import os

    env = {**os.environ, "COLLAPSE_LAB_FAULT": f"{moment}@INT"}
    # as from a shell: SIGINT neither ignored nor blocked, whatever an earlier test in this process left
    p = cli_proc("train", "--rounds", "30", "--store", tmp_path / "ck", preexec_fn=_default_sigint, env=env)
    _, err = p.communicate(timeout=120)
    # 130, or death by SIGINT (-2), which a shell reports as 130 too: CPython re-raises SIGINT at
    # exit when a KeyboardInterrupt passed through C code that ran Python
    assert p.returncode in (130, -signal.SIGINT) and "Traceback" not in err, (p.returncode, err[-3000:])
    last = err.strip().splitlines()[-1]
    assert last.startswith(("interrupted", "SIGINT: stopped")), err
    if moment.startswith(("step", "client")):  # inside training: the run stops after the client, resumable
        assert "SIGINT: stopped" in last and "in round 1" in last and "--resume" in last, last


def test_a_closed_pipe_is_quiet(tmp_path):
    store = tmp_path / "ck"
    assert CliRunner().invoke(cli, ["train", *GAUSS, "--rounds", "1", "--store", str(store)]).exit_code == 0
    # pipefail: the status is collapse-lab's, not head's
    p = subprocess.Popen(f"set -o pipefail; {sys.executable} -m collapse_lab.entry runs --store {store} | head -c 0",
                         shell=True, stderr=subprocess.PIPE, text=True, executable="/bin/bash")
    _, err = p.communicate(timeout=60)
    assert "Traceback" not in err and "Error" not in err, err
    assert p.returncode in (0, 141), p.returncode  # quiet success, or SIGPIPE's 128 + 13 as a shell tool ends


def test_runs_where_compares_values_not_spellings(tmp_path):
    store = tmp_path / "ck"
    assert CliRunner().invoke(cli, ["train", *GAUSS, "--rounds", "1", "--store", str(store)]).exit_code == 0
    for where, n in (("alpha=0.50", 1), ("alpha=5e-1", 1), ("alpha=0.05", 0), ("lr=1e-2", 1), ("lr=0.010", 1),
                     ("lr=0.02", 0), ("local_eval=False", 1), ("clients=3.0", 1), ("method=fedavg", 1)):
        res = CliRunner().invoke(cli, ["runs", "--store", str(store), "--where", where, "--json"])
        assert res.exit_code == 0 and len(json.loads(res.stdout)) == n, (where, res.output)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to find the worker processes")
def test_sigterm_to_a_ladder_keeps_its_records_and_says_how_to_continue(tmp_path):
    (tmp_path / "rungs.yaml").write_text("rungs:\n- name: long\n  set: {rounds: 400, local_epochs: 1}\n")
    store = tmp_path / "ck"
    _, code, err = _sigterm_after_round(store, 1, "ladder", "feddecorr-fig2", "--preset", "quick", "--rungs",
                                        tmp_path / "rungs.yaml", "--store", store, "--out", tmp_path / "lad",
                                        "--workers", "1", "--stack", "1")
    assert code == 143, err
    assert "ladder interrupted (SIGTERM)" in err and "the same command continues" in err and "Traceback" not in err
    time.sleep(0.5)
    assert _workers_of(store) == [] and not (tmp_path / "lad" / "records").exists()


_SLOW_IMPORT = """
import os, signal, time
os.kill(os.getpid(), signal.SIG{sig})
time.sleep(0.3)  # the signal arrives while this module is still importing
DONE = True
"""


@pytest.mark.parametrize("sig", ["INT", "TERM"])
def test_a_stop_inside_an_import_waits_for_the_import_to_end(tmp_path, sig):
    # raised inside an import, an interrupt can abort the process (a pybind11 module's init)
    # or be swallowed half-way and leave a broken module (seen: RecursionError in numpy)
    (tmp_path / "slowmod.py").write_text(_SLOW_IMPORT.format(sig=sig))
    code = f"""
import sys, time
sys.path.insert(0, {str(tmp_path)!r})
from collapse_lab.signals import received, sigterm_as_interrupt
try:
    with sigterm_as_interrupt():
        import slowmod
        print("imported", slowmod.DONE, flush=True)
        time.sleep(5)
        print("not stopped", flush=True)
except KeyboardInterrupt as e:
    print("stopped", type(e).__name__, received(), "slowmod" in sys.modules, flush=True)
"""
    # as from a shell: SIGINT not ignored, whatever an earlier test left behind (a child
    # started with SIGINT ignored keeps it ignored, and Python installs no handler)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         preexec_fn=_default_sigint)
    name = "KeyboardInterrupt" if sig == "INT" else "Terminated"
    assert res.stdout.split() == ["imported", "True", "stopped", name, f"SIG{sig}", "True"], res.stdout + res.stderr


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
