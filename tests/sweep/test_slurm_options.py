"""``--backend slurm`` without a cluster: job times as sbatch and collapse-lab write them, the
training time each job gets, the spec's ``slurm:`` mapping, and bad input (an unknown
partition, a time shorter than one round, the extra not installed, no SLURM): one line,
exit 2, nothing submitted and no store written. The SLURM commands are stand-ins that
answer as SLURM does and record every call (the real cluster: ``test_slurm_real.py``)."""
from __future__ import annotations

import os
import stat
import sys
import types
from pathlib import Path

import pytest
from click.testing import CliRunner

from collapse_lab.cli import cli
from collapse_lab.errors import CollapseLabError
from collapse_lab.sweep.slurm_options import SlurmOptions, check_options, margin, parse_slurm_time, sbatch_flags, \
    sbatch_options

SPEC = "base: {rounds: 3, local_epochs: 1, clients: 4}\ngrid: {alpha: [0.1, 1.0]}\nseeds: [0]\n"


@pytest.mark.parametrize("text,seconds", [("90", 5400), ("1:30", 90), ("1:30:00", 5400), ("2-00", 172800),
                                          ("1-02:03", 93780), ("1-02:03:04", 93784), ("4h", 14400), ("90m", 5400),
                                          ("1d2h", 93600)])
def test_job_times_as_sbatch_and_as_durations(text, seconds):
    assert parse_slurm_time(text) == seconds


@pytest.mark.parametrize("text", ["30s", "0", "soon", "1:2:3:4"])
def test_a_job_time_sbatch_cannot_take_is_one_line(text):
    with pytest.raises(CollapseLabError, match="--slurm-time"):
        parse_slurm_time(text)


def test_each_job_trains_for_its_time_less_a_margin_or_for_time_limit(tmp_path):
    assert margin(120) == 60 and margin(4 * 3600) == 720 and margin(2 * 86400) == 900  # 5 %, 1 to 15 minutes
    assert SlurmOptions(time="4h").train_seconds() == 4 * 3600 - 720
    assert SlurmOptions(time="2", train_limit="45s").train_seconds() == 45
    with pytest.raises(CollapseLabError, match="--time-limit 100s leaves less than 30 s"):
        check_options(SlurmOptions(time="2", train_limit="100s"))
    with pytest.raises(CollapseLabError, match="leaves no time to train"):
        check_options(SlurmOptions(time="1"))
    flags = sbatch_flags(SlurmOptions(time="90m", partition="gpu", gpus=2, cpus=8, mem="32G",
                                      extra=(("constraint", "a100"), ("exclusive", ""))))
    assert flags == ["--time=90", "--cpus-per-task=8", "--partition=gpu", "--mem=32G", "--gpus-per-node=2",
                     "--constraint=a100", "--exclusive"]
    pytest.importorskip("submitit")
    from submitit.slurm.slurm import _make_sbatch_string  # the script submitit writes from the same options

    script = _make_sbatch_string(command="true", folder=str(tmp_path), additional_parameters=sbatch_options(
        SlurmOptions(time="90m", extra=(("exclusive", ""),)))).splitlines()
    assert "#SBATCH --exclusive" in script and "#SBATCH --time=90" in script  # a bare flag, not --exclusive=''


@pytest.fixture
def with_submitit(monkeypatch):
    """The checks after the extra's (no SLURM, a partition, ...) where the extra is not
    installed: a stand-in module (these tests submit nothing; the real one is
    ``test_slurm_real.py``'s)."""
    try:
        import submitit  # noqa: F401
    except ImportError:
        monkeypatch.setitem(sys.modules, "submitit", types.ModuleType("submitit"))


@pytest.fixture
def fake_slurm(tmp_path, monkeypatch, with_submitit):
    """sinfo knows partition ``ci``; sbatch --test-only accepts; every call is logged."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    log = tmp_path / "calls.log"
    scripts = {
        "sinfo": 'echo "sinfo $*" >> {log}; echo ci',
        "sbatch": 'echo "sbatch $*" >> {log}; case "$*" in *--test-only*) echo "sbatch: Job 1 to start" >&2; exit 0;; '
                  '*) echo "Submitted batch job 7"; exit 0;; esac',
        "squeue": 'echo "squeue $*" >> {log}',
        "scontrol": 'echo "scontrol $*" >> {log}',
    }
    for name, body in scripts.items():
        p = bin_ / name
        p.write_text(f"#!/bin/sh\n{body.format(log=log)}\n")
        p.chmod(p.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_}{os.pathsep}{os.environ['PATH']}")
    return log


def _sweep(tmp_path, *extra):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    store = tmp_path / "store"
    res = CliRunner().invoke(cli, ["sweep", str(spec), "--store", str(store), "--backend", "slurm", *extra])
    return res, store


def _submitted(log: Path) -> list[str]:
    return [ln for ln in (log.read_text().splitlines() if log.exists() else []) if ln.startswith("sbatch")
            and "--test-only" not in ln]


@pytest.mark.parametrize("extra,message", [
    (["--slurm-partition", "gpu"], "--slurm-partition gpu: no such partition on this cluster; its partitions: ci"),
    (["--slurm-time", "2", "--time-limit", "0.001s"], "--time-limit 0.001s leaves 0.001 s of training per job, less "
                                                      "than one round of"),
    (["--slurm-time", "soon"], "--slurm-time 'soon': write a job time"),
    (["--slurm-option", "partition=gpu"], "--slurm-option partition: collapse-lab sets partition itself; give it as "
                                          "--slurm-partition"),
    (["--slurm-mem", "lots"], "--slurm-mem 'lots'"),
    (["--slurm-option", "cpus-per-task=8"], "--slurm-option cpus-per-task: collapse-lab sets cpus-per-task itself; "
                                            "give it as --slurm-cpus"),
    (["--workers", "2"], "have no effect with --backend slurm"),
])
def test_bad_slurm_input_is_one_line_exit_2_and_submits_nothing(tmp_path, fake_slurm, extra, message):
    res, store = _sweep(tmp_path, *extra)
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], res.output
    assert _submitted(fake_slurm) == [] and not store.exists()


def test_no_slurm_on_the_machine_is_one_line(tmp_path, monkeypatch, with_submitit):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    res, store = _sweep(tmp_path)
    assert res.exit_code == 2 and res.output.strip() == (
        "error: --backend slurm: no SLURM on this machine (sbatch is not on PATH); run it on the cluster's login "
        "node, or use --backend local")
    assert not store.exists()


def test_the_extra_not_installed_is_one_line(tmp_path, fake_slurm, monkeypatch):
    monkeypatch.setitem(sys.modules, "submitit", None)  # import submitit raises ImportError
    res, store = _sweep(tmp_path)
    assert res.exit_code == 2 and res.output.strip() == (
        "error: --backend slurm needs submitit: pip install 'collapse-lab[slurm]' (or pip install submitit)")
    assert _submitted(fake_slurm) == [] and not store.exists()


def test_a_slurm_that_does_not_answer_is_one_line(tmp_path, fake_slurm):
    sinfo = Path(os.environ["PATH"].split(os.pathsep)[0]) / "sinfo"
    sinfo.write_text("#!/bin/sh\necho 'sinfo: error: Unable to contact slurm controller (connect failure)' >&2\n"
                     "exit 1\n")
    res, store = _sweep(tmp_path)
    assert res.exit_code == 2 and "SLURM does not answer (sinfo: sinfo: error: Unable to contact slurm controller" \
        in res.output and len(res.output.strip().splitlines()) == 1
    assert _submitted(fake_slurm) == []


def test_slurm_options_with_another_backend_are_refused_not_ignored(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    res = CliRunner().invoke(cli, ["sweep", str(spec), "--slurm-partition", "gpu"])
    assert res.exit_code == 2 and "--slurm-partition has no effect with --backend local" in res.output
    res = CliRunner().invoke(cli, ["figures", "feddecorr-fig1", "--slurm-time", "2h", "--smoke"])
    assert res.exit_code == 2 and "--slurm-time has no effect with --backend local" in res.output
    res = CliRunner().invoke(cli, ["sweep", str(spec), "--wait"])
    assert res.exit_code == 2 and "--wait has no effect" in res.output


def test_the_spec_can_hold_the_slurm_options_and_a_flag_wins(tmp_path, fake_slurm):
    from collapse_lab.sweep.slurm_flags import given_slurm

    section = {"partition": "ci", "time": "2:00:00", "cpus": 4, "options": {"constraint": "a100", "exclusive": True}}
    o = given_slurm({}, section)
    assert (o.partition, o.job_seconds(), o.cpus, o.extra) == ("ci", 7200, 4, (("constraint", "a100"), ("exclusive", "")))
    with pytest.raises(CollapseLabError, match=r"slurm.gpu is not a SLURM option"):
        given_slurm({}, {"gpu": 1})
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC + "slurm: {partition: nope}\n")
    res = CliRunner().invoke(cli, ["sweep", str(spec), "--store", str(tmp_path / "s"), "--backend", "slurm"])
    assert res.exit_code == 2 and "--slurm-partition nope: no such partition" in res.output
    res = CliRunner().invoke(cli, ["sweep", str(spec), "--store", str(tmp_path / "s"), "--backend", "slurm",
                                   "--slurm-partition", "ci", "--dry-run"])
    assert res.exit_code == 0, res.output


def test_a_job_whose_time_ends_before_a_round_fails_its_run_and_is_not_requeued(tmp_path, fake_slurm, monkeypatch):
    """Requeued, such a job would stop at the same place again: its run fails, naming the
    option to change, and ``scontrol requeue`` is never called."""
    import json
    import signal

    from collapse_lab.sweep.slurm_job import UnitJob
    from collapse_lab.runspec.expand import expand

    cfg = expand(__import__("yaml").safe_load(SPEC), "spec")[0]
    monkeypatch.setenv("SLURM_JOB_ID", "77")
    monkeypatch.setenv("SLURM_RESTART_COUNT", "0")
    import torch

    before, threads = signal.getsignal(signal.SIGTERM), torch.get_num_threads()
    try:  # the deadline counts from this process's start: long past
        (r,) = UnitJob([cfg.to_json()], str(tmp_path / "s"), 1, 0.001, 5)()
    finally:  # the job sets its handler and its threads: later tests train in this process
        signal.signal(signal.SIGTERM, before)
        torch.set_num_threads(threads)
    assert r["status"] == "failed" and "ended before a round was complete" in r["error"] and "--slurm-time" in r["error"]
    assert not fake_slurm.exists() or not any(ln.startswith("scontrol") for ln in fake_slurm.read_text().splitlines())
    events = json.loads((tmp_path / "s" / ".slurm" / "runs" / f"{cfg.run_name()}.job-77.json").read_text())["events"]
    assert [e["event"] for e in events] == ["started", "ended"] and events[-1]["result"]["status"] == "failed"
