"""``--time-limit``: a run stopped by the limit and continued stores the same bytes as one
trained without it; the limit's parsing, and the refusals."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from collapse_lab.errors import CollapseLabError
from collapse_lab.runspec.resolve import resolve_runs
from collapse_lab.store.run_dir import RunDir
from collapse_lab.timelimit import EXIT_TIME_LIMIT, TIME_LIMIT, parse_duration
from collapse_lab.training.engine import train
from collapse_lab.training.stops import Interrupted, StopFlag
from collapse_lab.training.prepare import prepare

FLAGS = {"dataset": "gaussian", "dataset_option": ["dim=8", "train_per_class=30", "test_per_class=10"],
         "local_epochs": 2, "batch_size": 16, "rounds": 6, "clients": 3, "alpha": ["0.5"], "device": "cpu",
         "reg": "feddecorr", "method": "scaffold"}


@pytest.mark.parametrize("text,seconds", [("3h50m", 13_800), ("90m", 5_400), ("1d2h", 93_600), ("45s", 45),
                                          ("3600", 3_600), ("0.5h", 1_800), (" 2h 5s ", 7_205)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["3x", "h", "-5", "0", "0s", "3h3h", "3m2h1m", "", "inf", "nan"])
def test_bad_durations_are_one_line(text):
    with pytest.raises(CollapseLabError, match="--time-limit"):
        parse_duration(text)


@pytest.mark.parametrize("seconds,text", [(0.0432, "0.043 s"), (0.0, "0 s"), (0.5, "0.5 s"), (1.0, "1.0 s"),
                                          (59.94, "59.9 s"), (90, "1.5 min"), (13_800, "3.83 h")])
def test_durations_read_back_to_a_person_without_rounding_a_short_round_to_zero(seconds, text):
    from collapse_lab.timelimit import human

    assert human(seconds) == text


class RoundsThenOut(StopFlag):
    """A deadline that leaves room for ``n`` more round starts: the engine's decision, without a clock."""

    def __init__(self, n: int):
        super().__init__(deadline=time.time() + 3600)
        self.left = n

    def fits(self, seconds: float) -> bool:
        self.left -= 1
        return self.left >= 0


def _digests(store: Path) -> dict:
    return {str(p.relative_to(store)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(store.rglob("*.safetensors"))}


def test_a_run_stopped_by_the_limit_and_continued_stores_the_same_bytes(tmp_path):
    (cfg,) = resolve_runs(FLAGS)
    (p,) = prepare([cfg], tmp_path / "whole")
    train(p)
    (p,) = prepare([cfg], tmp_path / "cut")
    with pytest.raises(Interrupted) as e:
        train(p, stop=RoundsThenOut(2))
    assert e.value.signame == TIME_LIMIT and e.value.round == 3 and e.value.client is None
    meta = json.loads((p.path / "run.json").read_text())
    assert meta["rounds_complete"] == 2 and meta["status"] == "running"
    assert not (p.path / "round_3").exists()
    (p,) = prepare([cfg], tmp_path / "cut", resume=True)
    assert p.start == 2
    train(p)
    assert _digests(tmp_path / "cut") == _digests(tmp_path / "whole") and len(_digests(tmp_path / "whole")) > 10


def test_a_deadline_already_past_stops_before_the_first_round_and_between_clients():
    flag = StopFlag(deadline=time.time() - 1)
    assert not flag.fits(0.0) and flag.is_set() and flag.requested == TIME_LIMIT
    assert StopFlag(deadline=time.time() + 100).fits(10.0) and not StopFlag(deadline=time.time() + 100).fits(200.0)
    assert StopFlag().fits(1e9) and not StopFlag().is_set()


def _cli(*args, cwd):
    env = {k: v for k, v in os.environ.items() if k != "COLLAPSE_LAB_FAULT"}
    return subprocess.run([sys.executable, "-m", "collapse_lab.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.mark.slow
def test_train_with_a_real_limit_exits_75_and_the_printed_command_finishes_it(tmp_path):
    """On a real clock: where the limit falls depends on the machine, what is stored does
    not. The limit is derived from this machine's own start-up and round times, measured on
    the uninterrupted run (a machine five times slower gets a limit five times longer), so
    each call stores a few rounds wherever it runs. The machine's load may change between the
    calls (another test beside this one), so the first call's limit is about half the whole
    run: it would have to run about twice as fast as the uninterrupted run to finish within
    it (at this machine's start-up of about 3.7 rounds)."""
    rounds = 10
    args = ["train", "--rounds", str(rounds), "--alpha", "0.05", "--local-epochs", "40"]
    t0 = time.time()
    whole = _cli(*args, "--store", "whole", cwd=tmp_path)
    assert whole.returncode == 0, whole.stderr
    (run,) = [d for d in (tmp_path / "whole").iterdir() if d.is_dir() and not d.name.startswith(".")]
    events = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    training = max(e["seconds"] for e in events if e.get("event") == "round" and e.get("round", 0) >= 1)
    # start-up: from the process's start to round 0's global checkpoint, written before round 1
    # trains (the time after the last round, closing files and exiting, is not start-up)
    init = RunDir(run).global_path(0).stat().st_mtime
    per_round, startup = training / rounds, max(init - t0, 0.5)
    limit = 1.25 * startup + 2 * per_round  # about 2-3 rounds a call
    if not limit < 0.75 * (startup + rounds * per_round):  # the first call could not stop part way
        pytest.skip(f"this machine's start-up ({startup:.1f} s) took over 11 rounds ({per_round:.2f} s each) on this "
                    "run: another process held the cores, and a real-clock limit cannot fall part way")
    given = f"{limit:.1f}s"
    t0 = time.time()
    cut = _cli(*args, "--store", "cut", "--time-limit", given, cwd=tmp_path)
    took = time.time() - t0
    assert cut.returncode == EXIT_TIME_LIMIT, cut.stderr[-2000:]
    line = cut.stderr.strip().splitlines()[-1]
    assert line.startswith("time limit: stopped ") and "Continue with: collapse-lab train" in line
    assert line.endswith(f"--time-limit {given} --resume")
    (run,) = [d for d in (tmp_path / "cut").iterdir() if d.is_dir() and not d.name.startswith(".")]
    done = json.loads((run / "run.json").read_text())["rounds_complete"]
    # the rounds end by the deadline; a round that overruns stops between clients; closing
    # files and exiting take the rest
    assert done < rounds and took < limit + 2 * per_round + max(5.0, startup), (took, limit)
    for _ in range(3 * rounds):  # the printed command, as a job array's next job would run it
        again = _cli(*line.split("Continue with: collapse-lab ", 1)[1].split(), cwd=tmp_path)
        if again.returncode == 0:
            break
        assert again.returncode == EXIT_TIME_LIMIT, again.stderr[-2000:]
    assert again.returncode == 0
    assert _digests(tmp_path / "cut") == _digests(tmp_path / "whole")


@pytest.mark.slow
def test_a_limit_shorter_than_one_round_is_refused_before_anything_is_written(tmp_path):
    res = _cli("train", "--store", "s", "--time-limit", "1s", cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.strip().count("\n") == 0 and "--time-limit 1s leaves" in res.stderr
    assert "less than one round of digits_mlp_fedavg_none_dir0.01" in res.stderr
    assert not (tmp_path / "s").exists()
    res = _cli("train", "--store", "s", "--time-limit", "3x", cwd=tmp_path)
    assert res.returncode == 2 and "--time-limit '3x': write a duration" in res.stderr and not (tmp_path / "s").exists()
