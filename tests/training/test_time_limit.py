"""``--time-limit``: a run stopped by the limit and continued stores the same bytes as one
trained without it; the limit's parsing, and the refusals."""
from __future__ import annotations

import hashlib
import json
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


class Ticks:
    """A clock for the stop flag: one second a reading (the flag reads it between clients and
    before each round), so where a limit falls is fixed by the code path, on any machine."""

    def __init__(self):
        self.now = 0.0

    def time(self) -> float:
        self.now += 1.0
        return self.now


def test_train_with_a_limit_exits_75_and_the_printed_command_finishes_it(tmp_path, monkeypatch):
    """The command line on an injected clock (``Ticks``, the process started at 0): exit 75
    with the line that continues the run, which, run again and again as a job array's next
    job would, finishes it with the bytes of the run trained without a limit."""
    import shlex

    from click.testing import CliRunner

    from collapse_lab import timelimit
    from collapse_lab.cli import cli
    from collapse_lab.training import stops

    args = ["train", "--rounds", "6", "--alpha", "0.05", "--local-epochs", "1", "--clients", "4", "--probe", "0"]
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(cli, [*args, "--store", "whole"]).exit_code == 0
    monkeypatch.setattr(timelimit, "process_start", lambda: 0.0)
    monkeypatch.setattr(timelimit, "time", type("AtStart", (), {"time": staticmethod(lambda: 0.0)}))  # the upfront check
    calls, line = 0, None
    for _ in range(12):
        monkeypatch.setattr(stops, "time", Ticks())  # each call a fresh process: its clock starts at 0
        given = line.split("Continue with: collapse-lab ", 1)[1] if line else " ".join(
            [*args, "--store", "cut", "--time-limit", "12s"])
        monkeypatch.setattr(sys, "argv", ["collapse-lab", *shlex.split(given)])  # what the continue line repeats
        res = CliRunner().invoke(cli, shlex.split(given))
        calls += 1
        if res.exit_code == 0:
            break
        assert res.exit_code == EXIT_TIME_LIMIT, res.output
        line = res.stderr.strip().splitlines()[-1]
        assert line.startswith("time limit: stopped ") and line.endswith("--time-limit 12s --resume"), line
        (run,) = [d for d in (tmp_path / "cut").iterdir() if d.is_dir() and not d.name.startswith(".")]
        assert json.loads((run / "run.json").read_text())["rounds_complete"] < 6
    assert res.exit_code == 0 and calls > 2, (calls, res.output)  # stopped part way at least twice
    assert _digests(tmp_path / "cut") == _digests(tmp_path / "whole") and len(_digests(tmp_path / "whole")) > 10
