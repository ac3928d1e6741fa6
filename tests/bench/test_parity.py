"""The released-parity benchmark's arithmetic, file checks and configuration mapping (issue
40 item 3); the benchmark itself trains for minutes and is run by hand (docs/conventions.md)."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from collapse_lab.bench import parity, released_driver
from collapse_lab.cli import cli

VECTOR = Path(__file__).resolve().parents[1] / "vectors" / "released_parity" / "alpha0.5.json"


def test_summary_by_hand():
    released = {0: [0.1, 0.2, 0.3], 1: [0.2, 0.2, 0.2]}
    ours = {0: [0.2, 0.3, 0.4], 1: [0.1, 0.1, 0.1]}
    s = parity.summary(released, ours, last=2)
    final = s["over_seeds"]["final"]
    # differences +0.1 and -0.1: mean 0, sd 0.1414, t(0.975, 1) = 12.706 -> half width 1.2706
    assert final["difference"] == pytest.approx(0.0, abs=1e-12)
    assert final["interval"] == pytest.approx([-1.27062, 1.27062], abs=1e-4)
    assert final["ours_higher_in"] == 1 and final["seeds"] == 2
    assert s["rows"][0]["last2_released"] == pytest.approx(0.25) and s["rows"][0]["last2_ours"] == pytest.approx(0.35)
    assert s["over_seeds"]["all"]["released"] == pytest.approx((0.2 + 0.2) / 2)
    assert [p["ours"] for p in s["per_round"]] == pytest.approx([0.15, 0.2, 0.25])
    with pytest.raises(ValueError):
        parity.summary(released, {0: ours[0]})


def test_the_released_flags_map_to_the_same_run():
    o = parity.train_options(released_driver.DEFAULTS, "/data", 3)
    assert (o["alphas"], o["clients"], o["rounds"], o["local_epochs"], o["lr"], o["momentum"], o["weight_decay"],
            o["batch_size"], o["seeds"]) == ([0.5], 10, 20, 1, 0.01, 0.9, 1e-5, 64, [3])
    assert o["partition_options"] == {"rng": "released"} and o["method"] == "fedavg" and "reg" not in o
    d = parity.train_options({**released_driver.DEFAULTS, "feddecorr": True, "feddecorr_coef": 0.2}, None, 0)
    assert (d["reg"], d["beta"], d["decorr_norm"]) == ("feddecorr", 0.2, "official") and "data_root" not in d


@pytest.mark.parametrize("content,says", [
    ("not json", "not readable as JSON"),
    ('{"format": "other"}', "not a released-parity file"),
    (json.dumps({"format": parity.FORMAT, "config": {"n_comm_round": 2}, "seeds": {"0": [0.1]}}), "n_comm_round = 2"),
    (json.dumps({"format": parity.FORMAT, "config": {"n_comm_round": 1}, "seeds": {"0": ["x"]}}), "'seeds' must map"),
])
def test_bad_released_files_are_one_line(tmp_path, content, says):
    f = tmp_path / "r.json"
    f.write_text(content)
    r = CliRunner().invoke(cli, ["bench", "--workload", "released-parity", "--released", str(f), "--store",
                                  str(tmp_path / "s")])
    assert r.exit_code == 2 and says in r.output and len(r.output.strip().splitlines()) == 1
    assert not (tmp_path / "s").exists()


def test_released_goes_with_its_workload(tmp_path):
    r = CliRunner().invoke(cli, ["bench", "--released", str(tmp_path / "x.json")])
    assert r.exit_code == 2 and "--released goes with --workload released-parity" in r.output


def test_the_driver_refuses_a_folder_without_the_released_code(tmp_path):
    r = subprocess.run([sys.executable, released_driver.__file__, "--code", str(tmp_path), "--data-root", str(tmp_path),
                        "--out", str(tmp_path / "o.json")], capture_output=True, text=True)
    assert r.returncode == 2 and "no main.py there" in r.stderr and not (tmp_path / "o.json").exists()


@pytest.mark.parametrize("vector", [VECTOR, VECTOR.with_name("alpha0.5-h200.json")], ids=["cpu", "h200"])
def test_the_kept_vector_is_a_readable_record(vector):
    rec = parity.read_released(vector)
    assert rec["config"] == released_driver.DEFAULTS
    assert len(rec["seeds"]) >= 5 and all(len(v) == 20 for v in rec["seeds"].values())
    assert all(0.0 <= a <= 1.0 and not math.isnan(a) for v in rec["seeds"].values() for a in v)


@pytest.mark.slow
def test_the_benchmark_trains_the_same_configuration_and_compares(tmp_path):
    """End to end on digits (the same path as CIFAR-10 + ResNet-20, seconds instead of minutes):
    collapse-lab's runs use the released partition and the file's settings; their curves are
    the stored runs' test accuracies; a second call reuses the runs."""
    cfg = {**released_driver.DEFAULTS, "dataset": "digits", "model": "mlp", "n_comm_round": 2}
    f = tmp_path / "released.json"
    f.write_text(json.dumps({"format": parity.FORMAT, "config": cfg, "seeds": {"0": [0.5, 0.6], "1": [0.4, 0.7]}}))
    r = parity.run(f, store=tmp_path / "s")
    from collapse_lab.store import find_runs
    runs = {rd.meta["seed"]: rd for rd in find_runs(tmp_path / "s")}
    assert sorted(runs) == [0, 1]
    for s, rd in runs.items():
        m = rd.meta
        assert (m["partition_options"], m["alpha"], m["lr"], m["momentum"], m["weight_decay"], m["local_epochs"]) == (
            {"rng": "released"}, "0.5", 0.01, 0.9, 1e-5, 1)  # run.json keeps alpha as text (inf)
        want = [e["test_acc"] for e in rd.metrics() if e.get("event") == "round" and e["round"] >= 1]
        assert r["ours_curves"][str(s)] == want
    assert r["over_seeds"]["final"]["released"] == pytest.approx(0.65)
    assert r["over_seeds"]["final"]["difference"] == pytest.approx((want_final := sum(
        r["ours_curves"][k][-1] for k in ("0", "1")) / 2) - 0.65)
    assert 0 <= want_final <= 1
    assert parity.run(f, store=tmp_path / "s")["ours_curves"] == r["ours_curves"]
    assert "collapse-lab - released" in parity.text(r)
