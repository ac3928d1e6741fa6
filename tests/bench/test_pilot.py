"""The dry-run's pilot (plan/pilot.py): step rates from an injected clock, the pool's rate and
the plan's hours on this machine by hand, and --pilot only with --dry-run."""
from __future__ import annotations

import itertools

import pytest

from collapse_lab.plan.pilot import hours_here, pilot, step_rates
from collapse_lab.config import RunConfig


def _clock(step: float = 0.01):
    ticks = itertools.count()
    return lambda: next(ticks) * step


def test_each_step_is_timed_by_the_clock_and_warm_up_is_left_out():
    rates = step_rates("mlp", 1, 10, (1, 8, 8), 16, 0.05, _clock())
    assert rates and all(r == pytest.approx(16 / 0.01) for r in rates)  # one tick between a step's two readings


def test_the_pool_rate_is_a_workers_rate_times_the_workers_the_cores_hold(monkeypatch):
    import collapse_lab.sweep.backends as b

    monkeypatch.setattr(b, "cores", lambda: 2)
    out = pilot([RunConfig(dataset="digits", model="mlp", batch_size=16)], 0.05, workers=2, clock=_clock())
    assert out["mlp"]["images_s"] == (pytest.approx(2 * 1600.0), pytest.approx(2 * 1600.0))
    assert out["mlp"]["workers"] == 2 and out["mlp"]["threads"] == 1


def test_hours_here_by_hand():
    plan = {"models": [{"model": "cnn", "images": 3600 * 1000.0}, {"model": "mlp", "images": 3600 * 500.0}]}
    got = hours_here(plan, {"cnn": {"images_s": (500.0, 1000.0)}, "mlp": {"images_s": (250.0, 500.0)}})
    assert got == (pytest.approx(1.0 + 1.0), pytest.approx(2.0 + 2.0))
    assert hours_here(plan, {"cnn": {"images_s": (1.0, 2.0)}}) is None  # a model not measured: no figure


def test_pilot_without_dry_run_is_one_line(tmp_path):
    from tests.fixtures import invoke

    res = invoke("ladder", "feddecorr-fig2", "--preset", "quick", "--pilot", "5", "--store", tmp_path / "s",
                 "--out", tmp_path / "o")
    assert res.exit_code == 2 and "--pilot measures this machine for --dry-run's estimate" in res.output


def test_figures_and_tables_dry_runs_take_the_same_pilot(tmp_path):
    from tests.fixtures import invoke

    res = invoke("figures", "feddecorr-fig2", "--preset", "quick", "--dry-run", "--pilot", "1", "--workers", "1")
    assert res.exit_code == 0 and "this machine now, by the pilot: " in res.output and "of training steps" in res.output
    res = invoke("tables", "feddecorr-table1", "--pilot", "1", "--store", tmp_path / "s", "--out", tmp_path / "o")
    assert res.exit_code == 2 and "--pilot measures this machine for --dry-run's estimate" in res.output


def test_sweep_takes_the_same_pilot_and_a_range_reads_in_its_unit(tmp_path):
    from collapse_lab.plan.estimate import hours_range as _span
    from tests.fixtures import invoke

    assert (_span(1 / 3600, 2 / 3600), _span(0.5, 1.0), _span(2.0, 3.5)) == ("1-2 s", "30.0-60.0 min", "2.0-3.5 h")
    spec = tmp_path / "s.yaml"
    spec.write_text("base: {dataset: digits, rounds: 2, local_epochs: 1}\ngrid: {alpha: [0.1, inf]}\n")
    res = invoke("sweep", spec, "--store", tmp_path / "st", "--dry-run", "--pilot", "1", "--workers", "1")
    assert res.exit_code == 0 and "this machine now, by the pilot: " in res.output
    res = invoke("sweep", spec, "--store", tmp_path / "st", "--pilot", "1")
    assert res.exit_code == 2 and "--pilot measures this machine" in res.output and not (tmp_path / "st").exists()
