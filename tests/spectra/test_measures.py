"""The measure registry (issue 49 item 3): each quantity defined once, with its label,
unit, definition and what it reads; the participation ratio added end to end as the
demonstration (the spectrum command, the training probe, TensorBoard's tags, the report)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from collapse_lab.spectra.functional import spectrum
from collapse_lab.spectra.measures import MEASURES, PROBED, READS, REPORTED, Inputs, measures, value


def test_every_measure_declares_what_a_reader_needs():
    for name in MEASURES.names():
        info = MEASURES.info(name)
        assert info["reads"] in READS and info["label"] and info["unit"] and len(info["definition"]) > 20, name
    assert set(PROBED) <= set(MEASURES.names()) and set(REPORTED) <= set(MEASURES.names())
    with pytest.raises(TypeError, match="declare"):  # a measure without its declarations is refused
        MEASURES.register("x_no_label", unit="u", reads="spectrum", definition="d" * 30)(lambda s: 0)


def test_the_two_counts_above_tau_are_two_measures():
    """n_significant counts every singular value above tau; n_significant_top those among the
    top k (the figures' top 100): on a 150-d spectrum whose 120 values are all above tau they differ."""
    sv = torch.linspace(1.0, 0.02, 120, dtype=torch.float64)
    sv = torch.cat([sv, torch.full((30,), 1e-4, dtype=torch.float64)])
    s = Inputs(sv, 0.0, 0.01, 100)
    assert value("n_significant", s) == 120 and value("n_significant_top", s) == 100


def test_participation_ratio_by_hand_and_against_a_float64_reference():
    """PR = (sum lambda)^2 / sum lambda^2: d for a flat spectrum, 1 for rank one, and on random
    data the eigenvalues of numpy's float64 covariance give the same number."""
    assert value("participation_ratio", Inputs(torch.ones(7, dtype=torch.float64), 0.0)) == pytest.approx(7.0)
    assert value("participation_ratio", Inputs(torch.tensor([2.0, 0, 0], dtype=torch.float64), 0.0)) == 1.0
    assert value("participation_ratio", Inputs(torch.tensor([3.0, 1.0], dtype=torch.float64), 0.0)) == 16 / 10
    rng = np.random.default_rng(0)
    z = rng.normal(size=(400, 12)) @ rng.normal(size=(12, 12))
    lam = np.linalg.eigvalsh(np.cov(z, rowvar=False, bias=True))
    sv, floor = spectrum(torch.from_numpy(z))
    assert value("participation_ratio", Inputs(sv, floor)) == pytest.approx(lam.sum() ** 2 / (lam ** 2).sum(), rel=1e-10)


def test_the_record_holds_every_measure_of_what_it_was_given():
    z = torch.randn(300, 10, dtype=torch.float64)
    z[:, 4] = 0.0
    sv, floor = spectrum(z)
    plain, full = measures(sv, floor), measures(sv, floor, z=z)
    spec = {n for n in MEASURES.names() if MEASURES.info(n)["reads"] == "spectrum"}
    assert spec <= set(plain) and not {"dead_units", "rankme"} & set(plain)
    assert full["dead_units"] == 1 and full["dead_unit_indices"] == [4] and math.isclose(full["dead_share"], 0.1)
    with pytest.raises(ValueError, match="reads z"):
        value("rankme", Inputs(sv, floor))


def test_a_claim_that_names_an_unknown_measure_is_refused_by_check_specs(tmp_path, monkeypatch):
    """check_specs names the metric and what the renderer writes; the catalogue as shipped has none."""
    import analyses
    from collapse_lab.catalogue import check_specs
    from collapse_lab.analysis.catalogue import catalogue, unknown_metrics

    assert all(unknown_metrics(e) == [] for e in catalogue())
    src = (analyses.SPECS / "feddecorr-fig2.yaml").read_text()
    assert "metric: n_significant_top" in src
    (tmp_path / "feddecorr-fig2.yaml").write_text(src.replace("metric: n_significant_top", "metric: n_sig", 1))
    monkeypatch.setattr(check_specs, "SPECS", tmp_path)
    problems = check_specs.check()
    assert len(problems) == 1 and "'n_sig'" in problems[0] and "n_significant_top" in problems[0], problems


def test_a_layer_gets_every_measure_of_its_spectrum_and_null_where_too_narrow():
    """layer_measures (collapse-lab layers, --probe-layers): every registered measure that
    reads the spectrum alone but the top k's effective rank (the probe's logged view), by
    hand here; alpha-ReQ (ranks 11-100) is None for 8 values."""
    import math

    import torch

    from collapse_lab.spectra.measures import MEASURES, PER_LAYER, layer_measures

    assert set(PER_LAYER) == {n for n in MEASURES.names()
                              if MEASURES.info(n)["reads"] in ("spectrum", "top")} - {"effective_rank_top"}
    assert {"n_significant", "effective_rank", "participation_ratio", "stable_rank"} <= set(PER_LAYER)
    sv = torch.tensor([4.0, 2.0, 1.0, 1.0, 0.5, 0.25, 0.005, 0.0], dtype=torch.float64)
    got = layer_measures(sv, 1e-12)
    assert got["alpha_req"] is None and got["n_significant"] == 6
    assert math.isclose(got["participation_ratio"], 8.755 ** 2 / (16 + 4 + 1 + 1 + 0.25 + 0.0625 + 0.000025))
    assert math.isclose(got["stable_rank"], 8.755 / 4)
    p = sv[:7] / sv[:7].sum()
    assert math.isclose(got["effective_rank"], math.exp(-float((p * p.log()).sum())), rel_tol=1e-12)
