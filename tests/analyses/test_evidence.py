"""Claims recomputed from a record's evidence alone (analysis/evidence.py): a fig3-shaped
record built by hand, whose spectra make each form's answer known in advance (a BatchNorm-
like spectrum: every top-100 value above tau, so the literal count saturates while the
scale-free forms see the lifted tail), checked against numpy."""
from __future__ import annotations

import json

import numpy as np
import pytest

from collapse_lab.analysis.catalogue import pick
from collapse_lab.analysis.evidence import claims, sensitivity, spectra_values
from collapse_lab.judging.verdict import HOLDS, SATURATED


def _spectrum(decay: float, seed: int) -> list[float]:
    """256 values from 1 down, every one of the top 100 above 0.01 (a unit-variance-like scale)."""
    k = np.arange(256)
    sv = np.exp(-decay * k / 100) * (1 + 0.01 * np.sin(k + seed))
    return sorted(np.maximum(sv, 0.011).tolist(), reverse=True)


def _run(seed: int, alpha: str, reg: str) -> dict:
    setting = {"alpha": alpha, "reg": reg, "beta": 0.1, "decorr_norm": "official" if reg != "none" else "paper",
               "model": "cnn-bn", "reg_options": {}}
    decay = (3.0 if reg == "none" else 1.5) + 0.05 * seed  # FedDecorr: a slower fall, a lifted tail
    sv = _spectrum(decay, seed)
    return {"seed": seed, "reg": reg, "alpha": alpha, "setting": json.dumps(setting, sort_keys=True),
            "spectrum_global": sv, "floor_global": 1e-12, "spectrum_client0": sv, "floor_client0": 1e-12,
            "acc_curve": [10.0] * 10, "test_acc": 0.3}


@pytest.fixture(scope="module")
def runs():
    return [_run(s, a, r) for s in range(6) for a in ("0.01", "0.05") for r in ("none", "feddecorr")]


def test_the_forms_read_what_they_should(runs):
    entry = pick(["feddecorr-fig3"], "figure")[0].at("cpu")
    got = {c["text"]: c for c in claims(entry, runs)}
    literal_count = got["in every panel: n_sig(FedDecorr) > n_sig(FedAvg)"]
    assert literal_count["verdict"] == SATURATED and literal_count["form"] == "literal"
    for text, c in got.items():
        if c.get("form") == "scale-free" and "sigma_k / sigma_1" not in text:
            assert c["verdict"] == HOLDS and c["claimed_way_in"] == 6, text
    # sigma_100 / sigma_1 is about e^-3 = 0.05 > 0.01 in both: the relative count saturates here too
    assert got["in every panel: n(sigma_k / sigma_1 > 0.01, top-k) is larger with FedDecorr"]["verdict"] == SATURATED
    assert len(got) == 5 and all(c["seeds"] == 6 for c in got.values())


def test_the_measures_equal_numpys(runs):
    params = pick(["feddecorr-fig3"], "figure")[0].at("cpu").params
    values = spectra_values(params, runs, seed=2)
    panel = values["panels"][2]  # (c) alpha 0.01, global
    for s in panel["series"]:
        run = next(m for m in runs if m["seed"] == 2 and m["alpha"] == "0.01" and m["reg"] == s["key"]["reg"])
        sv = np.array(run["spectrum_global"])
        p = sv / sv.sum()
        assert s["metrics"]["effective_rank"] == pytest.approx(np.exp(-(p * np.log(p)).sum()), rel=1e-12)
        assert s["metrics"]["tail_share"] == pytest.approx(sv[50:100].sum() / sv.sum(), rel=1e-12)
        assert s["metrics"]["tail_mean"] == pytest.approx(np.log10(sv[50:100]).mean(), rel=1e-12)
        assert s["metrics"]["n_relative_top"] == int((sv[:100] / sv[0] > 1e-2).sum())
        assert s["metrics"]["n_significant_top"] == 100


def test_the_sensitivity_line_counts_at_three_thresholds(runs):
    params = pick(["feddecorr-fig3"], "figure")[0].at("cpu").params
    rows = sensitivity(params, runs)
    assert len(rows) == 8  # 4 panels x 2 settings
    for r in rows:
        c = r["n_relative_top"]
        assert c["0.1"] <= c["0.01"] <= c["0.001"] <= 100 and r["seeds"] == 6
