"""A verdict is never formed on an exception swallowed: a spec the catalogue cannot read
stops the ladder's claims instead of dropping the metric that names a count saturated."""
from __future__ import annotations

import pytest

from collapse_lab.analysis import catalogue as cat
from collapse_lab.analysis.ladder import _metrics_by_text


def test_a_broken_catalogue_raises_instead_of_dropping_the_metrics(monkeypatch):
    def broken(kind):
        raise ValueError("analyses/specs/feddecorr-fig2.yaml: bad YAML")
    monkeypatch.setattr(cat, "catalogue", broken)
    with pytest.raises(ValueError, match="bad YAML"):
        _metrics_by_text({"entry": "feddecorr-fig2"})


def test_an_entry_the_catalogue_no_longer_has_keeps_its_claims_as_kept():
    assert _metrics_by_text({"entry": "no-such-entry"}) == {}
    metrics = _metrics_by_text({"entry": "feddecorr-fig3"})
    assert "n_relative_top" in metrics.values() and "effective_rank" in metrics.values()
