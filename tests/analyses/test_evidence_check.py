"""Damaged or hand-edited evidence and records, still valid JSON, are refused in one line
that names the file (judging/evidence_check.py), never read into verdicts."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from collapse_lab.judging.evidence_check import check_record, measures_problem
from collapse_lab.errors import CollapseLabError

A = Path(__file__).resolve().parents[2] / "docs" / "scale" / "a" / "records"
RUN = "cifar10_cnn-bn_fedavg_none_dir0.01_K10_s0_6d4dea37-r30.json"


@pytest.fixture
def measures() -> dict:
    return json.loads((A / "runs" / RUN).read_text())["measures"]


def test_the_committed_evidence_passes(measures):
    assert measures_problem(measures, 30) is None
    check_record(json.loads((A / "n300-e10-bn-lr0.01-s6-r30--feddecorr-fig2.json").read_text()), "rec")


@pytest.mark.parametrize("edit,why", [
    (lambda m: m.update(spectrum_global=m["spectrum_global"][:3]), "3 and 256 values for 256 units"),
    (lambda m: m.pop("acc_curve"), "lacks 'acc_curve'"),
    (lambda m: m.update(acc_curve=m["acc_curve"][:29]), "29 points for 30 rounds"),
    (lambda m: m["spectrum_client0"].reverse(), "spectrum_client0 is not in descending order"),
    (lambda m: m.update(floor_global="small"), "a floor is not a finite value"),
    (lambda m: m.update(test_acc=19.8), "not an accuracy in [0, 1]")])
def test_each_damage_is_named(measures, edit, why):
    edit(measures)
    assert why in measures_problem(measures, 30)


def test_a_damaged_kept_evidence_file_is_refused_naming_it(tmp_path, measures):
    from collapse_lab.catalogue import kept_evidence

    class Cfg:  # the run the file names
        rounds = 30

        def run_name(self):
            return RUN.removesuffix("-r30.json")
    kept = json.loads((A / "runs" / RUN).read_text())
    kept["measures"]["spectrum_global"] = kept["measures"]["spectrum_global"][:3]
    p = tmp_path / "records" / "runs" / RUN
    p.parent.mkdir(parents=True)
    p.write_text(json.dumps(kept))
    with pytest.raises(CollapseLabError, match=f"{RUN}: its spectra have 3 and 256 values.*restore it"):
        kept_evidence.read(tmp_path, Cfg(), None)


@pytest.mark.parametrize("key", ["regime", "claims"])
def test_a_record_without_its_regime_or_claims_is_refused(key):
    rec = json.loads((A / "n300-e10-bn-lr0.01-s6-r30--feddecorr-fig2.json").read_text())
    rec.pop(key)
    with pytest.raises(CollapseLabError, match=f"rec.json: it lacks '{key}'"):
        check_record(rec, "rec.json")


def test_a_store_only_entrys_record_keeps_its_claims_on_rereading():
    """A ladder of feddecorr-fig11 (reg_loss, drawn from the store alone) wrote its record and
    then failed re-reading it: its claims are the record's own, not recomputed from spectra."""
    from collapse_lab.analysis.ladder import claims_of

    m = json.loads((A / "runs" / RUN).read_text())["measures"]
    kept = [{"text": "the loss falls", "check": "order", "holds": True, "verdict": "holds", "measured": "1 > 0"}]
    rec = {"entry": "feddecorr-fig11", "preset": "quick", "rung": "r2", "claims": kept, "regime": {"runs": [m]}}
    assert claims_of(rec) == kept
