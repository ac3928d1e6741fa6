"""The ladder's rule (docs/scale.md) and each run's regime, against hand computations: the
plateau, dead units, pooled and own-data accuracy, the rule reading every run, the paired
table comparison, the cheapest matched rung."""
from __future__ import annotations

import json
import math

import pytest
import torch

from collapse_lab.judging.ladder import accuracy_claims, choose, summary
from collapse_lab.judging.regime import own_accuracy, plateau, pooled_accuracy
from collapse_lab.spectra.rank import dead_units
from tests.fixtures import invoke


def test_plateau_is_the_change_over_the_last_three_rounds_in_points():
    acc = {0: 0.1, 1: 0.3, 2: 0.4, 3: 0.45, 4: 0.47, 5: 0.5}
    assert plateau(acc) == pytest.approx(100 * (0.5 - 0.4))
    assert plateau({0: 0.1, 1: 0.2, 2: 0.3}) is None  # no round R - 3
    assert plateau({}) is None


def test_dead_units_are_the_spectrum_commands_dead_units():
    z = torch.tensor([[0.0, 1.0, 0.0, 3.0], [0.0, 0.0, 2.0, 3.0], [0.0, 0.0, 0.0, 3.0]], dtype=torch.float64)
    assert dead_units(z).tolist() == [0, 3]  # column 0 (zero) and 3 (constant): no variance
    z = torch.randn(50, 6, dtype=torch.float64)
    z[:, 2] = 1e-9 * z[:, 2]  # 1e-18 of the largest variance: below the floor
    assert dead_units(z).tolist() == [2]
    with pytest.raises(ValueError):
        dead_units(torch.zeros(0, 3))


def test_pooled_accuracy_weights_clients_by_their_images():
    assert pooled_accuracy([9, 1], [10, 10]) == pytest.approx(0.5)
    assert pooled_accuracy([90, 0], [100, 1]) == pytest.approx(90 / 101)  # not the mean of 0.9 and 0
    assert pooled_accuracy([], []) is None


def _m(seed, setting="a", reg="none", own=0.95, plat=0.5, dead=1, units=100, acc=0.5, alpha="0.05", secs=10.0):
    ident = {"x": setting, "reg": reg, **({"beta": 0.1, "decorr_norm": "official"} if reg != "none" else
                                          {"decorr_norm": "paper"})}  # what names the regularizer differs
    return {"seed": seed, "setting": json.dumps(ident, sort_keys=True), "reg": reg, "own_acc": own,
            "plateau_points": plat, "dead_units": dead, "units": units, "test_acc": acc, "alpha": alpha,
            "train_seconds": secs}


def test_the_rule_reads_every_run_and_the_seed_mean_plateau():
    ms = [_m(0, plat=1.5), _m(1, plat=-0.7), _m(2, plat=0.6),  # seed mean 0.4667 < 1
          _m(0, "b", own=0.91, plat=0.9), _m(1, "b", plat=0.9), _m(2, "b", plat=1.05, dead=9)]  # mean 0.95
    s = summary(ms)
    assert s["own_acc_min"] == pytest.approx(0.91) and s["plateau_max_points"] == pytest.approx(0.95)
    assert s["dead_share_max_fedavg"] == pytest.approx(0.09) and s["train_seconds_sum"] == 60.0
    assert s["checks"] == {"clients": True, "plateau": True, "dead": True} and s["matched"]
    s = summary([*ms[:5], _m(2, "b", plat=1.3)])  # setting b: mean (0.9 + 0.9 + 1.3) / 3 = 1.033
    assert s["checks"]["plateau"] is False and not s["matched"]
    s = summary([*ms[:5], _m(2, "b", own=0.899)])
    assert s["checks"]["clients"] is False
    s = summary([*ms, _m(0, reg="feddecorr", dead=90)])  # dead units count for FedAvg runs only
    assert s["dead_share_max_fedavg"] == pytest.approx(0.09) and s["checks"]["dead"] is True
    s = summary([*ms, _m(3, "c", dead=10)])  # 10 of 100: not below 10 %
    assert s["checks"]["dead"] is False
    s = summary([{**ms[0], "own_acc": None}, *ms[1:]])  # not measured: not matched, and said
    assert s["checks"]["clients"] is None and not s["matched"]


def test_table1_comparison_is_paired_by_seed_with_the_t_interval():
    from scipy.stats import t

    base = [_m(s, acc=a) for s, a in enumerate((0.20, 0.18, 0.22))]
    reg = [_m(s, reg="feddecorr", acc=a) for s, a in enumerate((0.15, 0.14, 0.16))]
    (c,) = accuracy_claims(base + reg)
    d = [-5.0, -4.0, -6.0]  # points
    mean, sd = sum(d) / 3, math.sqrt(sum((x - sum(d) / 3) ** 2 for x in d) / 2)
    half = t.ppf(0.975, 2) * sd / math.sqrt(3)
    e = c["effects"][0]
    assert e["mean"] == pytest.approx(mean) and e["high"] == pytest.approx(mean + half)
    assert c["verdict"] == "refuted" and c["holds"] is False and c["claimed_way_in"] == 0
    assert "feddecorr > FedAvg at alpha 0.05" in c["text"]
    # a gain in every seed with a spread that leaves 0 inside: not resolved
    reg = [_m(s, reg="feddecorr", acc=a) for s, a in enumerate((0.21, 0.181, 0.30))]
    (c,) = accuracy_claims(base + reg)
    assert c["verdict"] == "not resolved at this scale" and c["claimed_way_in"] == 3 and c["seeds_to_resolve"] > 3
    assert accuracy_claims(base) == []  # no regularizer: no comparison


def _rec(rung, entry, matched, secs, est=None):
    return {"rung": rung, "entry": entry, "estimated_seconds": est,
            "regime": {"matched": matched, "train_seconds_sum": secs,
                       "checks": {"clients": matched, "plateau": True, "dead": True}}}


def test_the_rule_chooses_the_cheapest_matched_rung_within_the_budget():
    recs = [_rec("a", "f", False, 100), _rec("b", "f", True, 5000), _rec("c", "f", True, 3000),
            _rec("d", "f", True, 9000)]  # d: 9000 s over 2 workers = 75 min > 60
    assert choose(recs)["f"]["rung"] == "c"
    got = choose([_rec("a", "g", False, 100), _rec("d", "g", True, 9000)])["g"]
    assert got["rung"] is None and "a fails clients" in got["why"] and "d fails the budget" in got["why"]
    # the estimate, where a record has it, decides (a loaded machine's times do not)
    recs = [_rec("b", "h", True, 5000, est=1000), _rec("c", "h", True, 3000, est=1200), _rec("e", "h", True, 10, 3700)]
    assert choose(recs)["h"]["rung"] == "b"
    assert "e fails the budget" in choose([recs[2]])["h"]["why"]


def test_own_accuracy_equals_a_hand_evaluation(tmp_path):
    """Each client's final local model scored image by image in float64 on its own
    training images (the partition the run stored), pooled by hand."""
    from collapse_lab.analysis.features import FeatureSource
    from collapse_lab.data import load_dataset, normalize
    from collapse_lab.models import build_model
    from collapse_lab.store import RunDir
    from collapse_lab.tensor_files import load_tensors

    res = invoke("train", "--rounds", "2", "--alpha", "0.1", "--clients", "4", "--keep-local", "last",
                 "--store", tmp_path)
    assert res.exit_code == 0, res.output
    (path,) = [p for p in tmp_path.iterdir() if (p / "run.json").is_file()]
    run = RunDir(path)
    got = own_accuracy(run, FeatureSource(split="train"), 2)
    ds = normalize.apply(load_dataset("digits"), "dataset")
    idx = json.loads((path / "run.json").read_text())["client_sizes"]
    hits, sizes = [], []
    for k, ix in enumerate(run.partition().client_indices):
        m = build_model("mlp", ds.num_classes, ds.input_shape).double().eval()
        m.load_state_dict({n: v.double() if v.is_floating_point() else v
                           for n, v in load_tensors(path / "round_2" / f"client_{k}.safetensors").items()})
        with torch.no_grad():  # float64, the whole client at once (own_accuracy: float32, in batches)
            xi = torch.as_tensor(ix, dtype=torch.long)
            h = int((m(ds.to_float(ds.train_x[xi], torch.float64))[0].argmax(1) == ds.train_y[xi]).sum())
        hits.append(h)
        sizes.append(len(ix))
    assert sizes == idx
    assert got["per_client"] == pytest.approx([h / n for h, n in zip(hits, sizes)])
    assert got["pooled"] == pytest.approx(sum(hits) / sum(sizes)) and got["min"] == min(got["per_client"])
    missing = own_accuracy(run, FeatureSource(split="train"), 1)  # round 1's clients were not kept
    assert "client 0's model of round 1 is not stored" in missing["missing"]
