"""``collapse-lab ladder`` (issue 48, item 2): rungs of overrides, each run's regime, the rule
of docs/scale.md and the claims per rung, against hand computations."""
from __future__ import annotations

import json
from pathlib import Path
import math

import pytest
import torch

from collapse_lab.plan import entry_runs
from collapse_lab.analysis.ladder import accuracy_claims, choose, summary
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


# the second rung extends the first's runs (rounds is not part of a run's name): the first's
# numbers are measured at round 3 before they grow to 4; two seeds of the entry's three (a
# rung's seed list replaces the entry's)
RUNGS = ("rungs:\n- name: r3\n  set: {rounds: 3, local_epochs: 1}\n  seeds: [0, 1]\n"
         "- name: r4\n  set: {rounds: 4, local_epochs: 1}\n  seeds: [0, 1]\n")


@pytest.mark.slow
def test_a_ladder_keeps_each_rung_and_never_trains_it_twice(tmp_path):
    (tmp_path / "rungs.yaml").write_text(RUNGS)
    args = ["ladder", "feddecorr-fig2", "--preset", "quick", "--rungs", tmp_path / "rungs.yaml",
            "--store", tmp_path / "st", "--out", tmp_path / "lad"]
    dry = invoke(*args, "--dry-run", "--json")
    assert dry.exit_code == 0, dry.output
    plan = json.loads(dry.stdout)
    assert [(r["rung"], r["runs"], r["to_train"]) for r in plan] == [("r3", 8, 8), ("r4", 8, 8)]
    res = invoke(*args, "--json")
    assert res.exit_code == 0, res.output
    recs = json.loads(res.stdout)["records"]
    assert [(r["rung"], r["applied"]) for r in recs] == [("r3", {"rounds": 3, "local_epochs": 1, "seeds": [0, 1]}),
                                                         ("r4", {"rounds": 4, "local_epochs": 1, "seeds": [0, 1]})]
    assert recs[0]["runs"] == recs[1]["runs"] and [r["rounds"] for r in recs] == [[3] * 8, [4] * 8]
    for r, rounds in zip(recs, (3, 4)):
        assert len(r["regime"]["runs"]) == 8 and len(r["claims"]) == 8
        for m in r["regime"]["runs"]:
            meta = json.loads((tmp_path / "st" / m["run"] / "run.json").read_text())
            assert meta["rounds"] == 4 and m["round"] == rounds and 0 <= m["own_acc"] <= 1
            assert meta["local_epochs"] == 1
            acc = {e["round"]: e["test_acc"] for e in map(json.loads, (tmp_path / "st" / m["run"] / "metrics.jsonl")
                   .read_text().splitlines()) if e.get("event") == "round"}
            assert m["test_acc"] == acc[rounds] and m["plateau_points"] == pytest.approx(
                100 * (acc[rounds] - acc[rounds - 3]))
            assert m["dead_units"] <= m["units"] == 128
            # the evidence: the accuracy curve as logged, the spectra the claims are recomputed from
            assert m["acc_curve"] == [round(100 * acc[q], 6) for q in range(1, rounds + 1)]
            assert len(m["spectrum_global"]) == len(m["spectrum_client0"]) == 128
            assert m["spectrum_global"] == sorted(m["spectrum_global"], reverse=True)
        assert r["format"] == 2
        # every claim recomputed from the record alone equals the claim rendered from the store
        from collapse_lab.analysis.ladder import claims_of

        again_ = claims_of(r)[:len(r["claims"])]
        for stored, recomputed in zip(r["claims"], again_):
            assert stored["verdict"] == recomputed["verdict"] and stored["claimed_way_in"] == recomputed["claimed_way_in"]
            assert [e["mean"] for e in stored["effects"]] == pytest.approx([e["mean"] for e in recomputed["effects"]])
    md = (tmp_path / "lad" / "LADDER.md").read_text()
    assert "| r3 | feddecorr-fig2 | rounds=3 local_epochs=1 seeds 0-1 |" in md and "## Claims x rungs" in md
    rows = (tmp_path / "lad" / "ladder.csv").read_text().splitlines()
    assert len(rows) == 1 + 2 * 8 and rows[0].startswith("rung,entry,claim,text,form,verdict")
    # from the records alone: the store gone, --no-train writes the same bytes
    outs = {p.name: p.read_bytes() for p in (tmp_path / "lad").iterdir() if p.is_file() and p.suffix != ".pdf"}
    (tmp_path / "st").rename(tmp_path / "st-away")
    alone = invoke(*args, "--no-train")
    assert alone.exit_code == 0, alone.output
    assert {p.name: p.read_bytes() for p in (tmp_path / "lad").iterdir() if p.is_file() and p.suffix != ".pdf"} == outs
    (tmp_path / "st-away").rename(tmp_path / "st")
    assert (tmp_path / "lad" / "ladder.png").stat().st_size > 10_000
    # again: every record is kept, nothing trains, the same numbers come back
    stamp = {p: p.stat().st_mtime_ns for p in (tmp_path / "st").glob("*/run.json")}
    again = invoke(*args, "--json")
    assert again.exit_code == 0, again.output
    assert again.stderr.count("(not trained again)") == 2 and "runs trained" not in again.stderr
    assert json.loads(again.stdout)["records"] == recs
    assert stamp == {p: p.stat().st_mtime_ns for p in (tmp_path / "st").glob("*/run.json")}
    dry = json.loads(invoke(*args, "--dry-run", "--json").stdout)
    assert [(r["runs"], r["to_train"], r["kept"]) for r in dry] == [(0, 0, ["feddecorr-fig2"])] * 2
    # --no-train: the outputs from what is kept; a rung without runs says so and trains nothing
    (tmp_path / "rungs.yaml").write_text(RUNGS + "- name: r5\n  set: {rounds: 5, local_epochs: 1}\n")
    res = invoke(*args, "--no-train", "--json")
    assert res.exit_code == 0, res.output
    recs3 = json.loads(res.stdout)["records"]
    assert recs3[:2] == recs and recs3[2]["na"].startswith("not trained yet")
    # a kept record's cost is the project's estimate as it is now, not as it was when it trained
    kept = tmp_path / "lad" / "records" / "r3--feddecorr-fig2.json"
    kept.write_text(json.dumps({**json.loads(kept.read_text()), "estimated_seconds": 12345.6}))
    recs4 = json.loads(invoke(*args, "--no-train", "--json").stdout)["records"]
    assert recs4[0]["estimated_seconds"] == recs[0]["estimated_seconds"] != 12345.6 and recs4[:2] == recs
    assert "| r5 | feddecorr-fig2 | rounds=5 local_epochs=1 | not trained yet" in (tmp_path / "lad" / "LADDER.md").read_text()
    assert stamp == {p: p.stat().st_mtime_ns for p in (tmp_path / "st").glob("*/run.json")}
    # --rung: only the named rungs may train; r5 is left untrained and says why, the kept ones are read
    only = invoke(*args, "--rung", "r4", "--json")
    assert only.exit_code == 0, only.output
    recs5 = json.loads(only.stdout)["records"]
    assert recs5[:2] == recs and recs5[2]["na"] == "not trained yet (--rung r4 trained the others)"
    assert "runs trained" not in only.stderr
    assert stamp == {p: p.stat().st_mtime_ns for p in (tmp_path / "st").glob("*/run.json")}
    dry5 = json.loads(invoke(*args, "--rung", "r5", "--dry-run", "--json").stdout)
    assert [(r["rung"], r["runs"], r["to_train"]) for r in dry5] == [("r5", 12, 12)]


@pytest.mark.slow
def test_a_rung_trained_over_two_machines_trains_each_run_once_and_gives_the_same_record(tmp_path):
    """Each run's evidence is kept as the run completes (records/runs/); a second machine
    with an empty store and those files trains only the runs without evidence, and the
    rung's records assembled from evidence and the store equal the one-machine records, their
    claims recomputed from the record equal to those rendered from the store. ICLR Fig. 2
    (spectra) and journal Fig. 4 (R) share their quick runs."""
    import shutil

    from collapse_lab.analysis.ladder import claims_of

    entries = ["feddecorr-fig2", "journal-fig4"]
    rung = "rungs:\n- name: r3\n  set: {rounds: 3, local_epochs: 1}\n  seeds: [0, 1]\n"
    (tmp_path / "rungs.yaml").write_text(rung)

    def ladder(store, out, *more):
        return invoke("ladder", *entries, "--preset", "quick", "--rungs", tmp_path / "rungs.yaml",
                      "--store", tmp_path / store, "--out", tmp_path / out, "--json", *more)

    one = ladder("st", "lad")
    assert one.exit_code == 0, one.output
    recs = json.loads(one.stdout)["records"]
    assert [r["entry"] for r in recs] == entries and recs[0]["runs"] == recs[1]["runs"]
    kept = sorted((tmp_path / "lad" / "records" / "runs").iterdir())
    assert [p.name for p in kept] == sorted(f"{r}-r3.json" for r in recs[0]["runs"])
    assert one.stderr.count("evidence kept in") == 8
    for rec in recs:
        for p, m in zip(kept, sorted(rec["regime"]["runs"], key=lambda m: m["run"])):
            assert json.loads(p.read_text())["measures"] == m  # the record's run, as kept the moment it trained
        for stored, again in zip(rec["claims"], claims_of(rec)):  # from the record alone, as from the store
            assert {k: v for k, v in again.items() if k in stored} == stored
    # machine 2: the evidence of 5 runs carried over (a commit), its own empty store
    (tmp_path / "lad2" / "records" / "runs").mkdir(parents=True)
    for p in kept[:5]:
        shutil.copy(p, tmp_path / "lad2" / "records" / "runs")
    dry = json.loads(ladder("st2", "lad2", "--dry-run").stdout)
    assert [(r["runs"], r["to_train"]) for r in dry] == [(8, 3)]
    two = ladder("st2", "lad2")
    assert two.exit_code == 0, two.output
    assert "training 3 run(s)" in two.stderr and len(list((tmp_path / "st2").glob("*/run.json"))) == 3
    wall = ("wall_seconds", "rung_wall_seconds", "figure")

    def timeless(r):  # the seconds a training took are the machine's, not the run's
        reg = {k: v for k, v in r["regime"].items() if k != "train_seconds_sum"}
        reg["runs"] = [{k: v for k, v in m.items() if k != "train_seconds"} for m in reg["runs"]]
        return {**{k: v for k, v in r.items() if k not in wall}, "regime": reg}
    assert [timeless(r) for r in json.loads(two.stdout)["records"]] == [timeless(r) for r in recs]
    # the figures drawn from the evidence: the curves and numbers the store's render drew
    for entry in entries:
        f1, f2 = (json.loads((tmp_path / d / "r3" / f"{entry}.json").read_text()) for d in ("lad", "lad2"))
        assert [p["title"] for p in f1["values"]["panels"]] == [p["title"] for p in f2["values"]["panels"]]
        for p1, p2 in zip(f1["values"]["panels"], f2["values"]["panels"]):
            assert [s["n"] for s in p1["series"]] == [s["n"] for s in p2["series"]]
            assert {s["n"] for s in p1["series"]} == {2}
            assert [s["label"] for s in p1["series"]] == [s["label"] for s in p2["series"]]
            assert p2.get("metrics", {}) == pytest.approx(p1.get("metrics", {}))
            for s1, s2 in zip(p1["series"], p2["series"]):
                assert s2["y"] == pytest.approx(s1["y"], abs=1e-12) and s2["metrics"] == pytest.approx(s1["metrics"])
        assert (tmp_path / "lad2" / "r3" / f"{entry}.png").stat().st_size > 10_000
    # --no-train on a store that holds some of a rung's runs keeps their evidence and says how many
    for r in recs[0]["runs"][:2]:
        shutil.copytree(tmp_path / "st" / r, tmp_path / "st3" / r)
    three = ladder("st3", "lad3", "--no-train")
    assert three.exit_code == 0, three.output
    assert [r["na"] for r in json.loads(three.stdout)["records"]] == [
        "not trained yet (6 of 8 runs; the ladder without --no-train trains them; the evidence of 2 kept)",
        "not trained yet (6 of 8 runs; the ladder without --no-train trains them)"]  # the same runs, kept once
    assert sorted(p.name for p in (tmp_path / "lad3" / "records" / "runs").iterdir()) == sorted(
        f"{r}-r3.json" for r in recs[0]["runs"][:2])
    # evidence of other images is not taken for these: a record names its test split's hash
    bad = tmp_path / "lad3" / "records" / "runs" / f"{recs[0]['runs'][0]}-r3.json"
    bad.write_text(json.dumps({**json.loads(bad.read_text()), "data": {"test_sha256": "0" * 64}}))
    assert [(r["to_train"]) for r in json.loads(ladder("st4", "lad3", "--dry-run").stdout)] == [7]


def test_kept_evidence_spares_training_only_where_the_figure_can_be_drawn_from_it(tmp_path):
    """A spectra entry (ICLR Fig. 2) and an R entry (journal Fig. 4) are drawn from their
    runs' kept spectra; an accuracy figure (ICLR Fig. 4) reads every run from the store, so
    its runs train whatever is kept. A kept file is taken only for its run, rounds, images."""
    import dataclasses

    from collapse_lab.analysis.catalogue import pick
    from collapse_lab.catalogue import kept_evidence
    from collapse_lab.catalogue.cell_measures import to_train
    from collapse_lab.catalogue.render import render_evidence
    from collapse_lab.config import RunConfig
    from collapse_lab.errors import CollapseLabError

    runs = [RunConfig(seed=s, rounds=3) for s in (0, 1)]
    data = {"test_sha256": "a" * 64}
    real = json.loads((Path(__file__).resolve().parents[2] / "docs" / "scale" / "a" / "records" / "runs" /
                       "cifar10_cnn-bn_fedavg_none_dir0.01_K10_s0_6d4dea37-r30.json").read_text())["measures"]
    measures = {**real, "acc_curve": real["acc_curve"][:3], "round": 3}  # a whole run's evidence, 3 rounds long
    kept_evidence.keep(tmp_path, runs[0], data, measures)
    fig2, fig4, acc = pick(["feddecorr-fig2", "journal-fig4", "feddecorr-fig4"], "figure")
    assert to_train({"entry": fig2, "configs": runs, "data": data}, tmp_path) == runs[1:]
    assert to_train({"entry": fig4, "configs": runs, "data": data}, tmp_path) == runs[1:]
    assert to_train({"entry": acc, "configs": runs, "data": data}, tmp_path) == runs
    assert kept_evidence.read(tmp_path, runs[0], data) == measures
    assert kept_evidence.read(tmp_path, runs[0], None) == measures  # images unreadable: taken by run and rounds
    assert kept_evidence.read(tmp_path, runs[0], {"test_sha256": "b" * 64}) is None
    assert kept_evidence.read(tmp_path, dataclasses.replace(runs[0], rounds=4), data) is None
    kept_evidence.path(tmp_path, runs[1]).write_text('{"format": 2, "run": "x"')  # cut short: measured again
    assert kept_evidence.read(tmp_path, runs[1], data) is None
    with pytest.raises(CollapseLabError, match="computed from the store only"):
        render_evidence(acc, type("Ctx", (), {"preset": "quick"})(), tmp_path, [])


BAD_RUNGS = [
    (None, "no such file"),
    ("rungs: [\n", "not valid YAML"),
    ("- name: a\n", "a mapping with one key, rungs"),
    ("rungs: []\n", "a non-empty list of rungs"),
    ("rungs: {a: 1}\n", "a mapping with one key, rungs"),
    ("rungs:\n- 5\n", "rung 1 must be a mapping"),
    ("rungs:\n- name: 'a b'\n", "rung 1: name must be a short word"),
    ("rungs:\n- set: {lr: 0.1}\n", "rung 1: name must be a short word"),
    ("rungs:\n- name: a\n  sett: {lr: 0.1}\n", "rung a: unknown key 'sett'"),
    ("rungs:\n- name: a\n  set: [lr, 0.1]\n", "rung a: set must be a mapping"),
    ("rungs:\n- name: a\n  set: {bogus: 1}\n", "rung a: --set bogus: no such train option"),
    ("rungs:\n- name: a\n  set: {rounds: 1}\n", "rung a: rounds 1: give 2 or more"),  # refused before it trains
    ("rungs:\n- name: a\n  set: {lr: 0.1, lr: 0.2}\n", "key 'lr' is given twice in one mapping (line 3)"),
    ("rungs:\n- name: a\n  set: {local_epochs: 1.5}\n", "rung a: --set: --local-epochs 1.5 is not a whole number"),
    ("rungs:\n- name: a\n  set: {lr: -1}\n", "--lr must be > 0"),
    ("rungs:\n- name: a\n  set: {device: cpu}\n", "rung a: --set device: device is not part of what a run computes"),
    ("rungs:\n- name: a\n  set: {dataset_options: {x: 1}}\n", "rung a: dataset_options: give one value"),
    ("rungs:\n- name: a\n  set: {lr: 0.1}\n  entries: [feddecorr-fig33]\n",
     "rung a: entry 'feddecorr-fig33' is not a figure of the catalogue"),
    # a rung only for entries this ladder does not climb is skipped: here none is left
    ("rungs:\n- name: a\n  set: {lr: 0.1}\n  entries: [feddecorr-fig3]\n", "no rung applies to feddecorr-fig2"),
    ("rungs:\n- name: a\n  seeds: [0, 0]\n", "rung a: seeds must be a list of distinct seeds"),
    ("rungs:\n- name: a\n  set: {lr: 0.1}\n  entries: feddecorr-fig2\n", "rung a: entries must be a list"),
    ("rungs:\n- name: a\n  note: 5\n", "rung a: note must be a text"),
    ("rungs:\n- name: a\n- name: a\n  set: {lr: 0.1}\n", "rung name 'a' is given twice"),
    ("rungs:\n- name: a\n  set: {lr: 0.1}\n- name: b\n  set: {lr: 0.1}\n", "rungs a and b set the same options"),
    ("rungs:\n- name: a\n  set: {alpha: 0.1}\n", "no rung applies to feddecorr-fig2"),
    ("rungs:\n- name: a\n  set: {alpha: 0.1}\n  entries: [feddecorr-fig2]\n",
     "rung a: does not apply to feddecorr-fig2: --set alpha: feddecorr-fig2 varies alpha"),
]


def test_a_ladder_of_a_subset_skips_the_rungs_of_other_entries_and_a_rung_may_set_the_seeds(tmp_path):
    from collapse_lab.catalogue.rungs import load_rungs

    f = tmp_path / "rungs.yaml"
    f.write_text("rungs:\n- name: a\n  set: {lr: 0.1}\n  entries: [feddecorr-fig3]\n- name: b\n  set: {lr: 0.2}\n"
                 "  seeds: [0, 1, 2, 3]\n  entries: [feddecorr-fig2, journal-fig4]\n")
    (b,) = load_rungs(f, ["feddecorr-fig2"])
    assert b.name == "b" and b.entries == ("feddecorr-fig2",) and b.seeds == (0, 1, 2, 3)
    res = invoke("ladder", "feddecorr-fig2", "--preset", "quick", "--rungs", f, "--store", tmp_path / "st",
                 "--out", tmp_path / "lad", "--dry-run", "--json")
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)
    assert row["rung"] == "b" and row["runs"] == 16  # 4 alphas x 4 seeds: the rung's seeds replace the spec's 3


def test_the_packaged_ladder_is_the_default_and_plans_without_the_data(tmp_path, monkeypatch):
    """``ladder ENTRY --dry-run`` with no --rungs reads the study's ladder as installed
    (analyses/ladder/rungs.yaml, in the wheel) and plans it with no data at hand."""
    import yaml

    from collapse_lab.catalogue.rungs import packaged

    monkeypatch.chdir(tmp_path)  # an empty folder: nothing of the repository's docs/
    monkeypatch.delenv("COLLAPSE_LAB_DATA", raising=False)
    ladder = packaged()
    assert set(ladder) == {"rungs", "rungs-gpu"}
    want = [r["name"] for r in yaml.safe_load(ladder["rungs"].read_text())["rungs"]
            if "feddecorr-fig2" in r.get("entries", ["feddecorr-fig2"])]
    res = invoke("ladder", "feddecorr-fig2", "--dry-run", "--json")
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert [r["rung"] for r in got] == want and all(0 <= r["to_train"] <= r["runs"] for r in got)
    assert got[0]["to_train"] == got[0]["runs"] == 12  # nothing kept here: the first rung trains all it reads
    assert "no data to match kept records against" not in res.stderr  # --json: the JSON alone on stdout
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize("text,message", BAD_RUNGS)
def test_a_bad_rungs_file_is_one_line_and_exit_2(tmp_path, text, message):
    f = tmp_path / "rungs.yaml"
    if text is not None:
        f.write_text(text)
    res = invoke("ladder", "feddecorr-fig2", "--preset", "quick", "--rungs", f, "--store", tmp_path / "st",
                 "--out", tmp_path / "lad")
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in res.output, res.stderr
    assert not (tmp_path / "lad").exists() and not (tmp_path / "st").exists()  # nothing written


@pytest.mark.parametrize("args,message", [
    (["fednc-fig1"], "fednc-fig1 has no claims to check"),
    (["nosuch"], "unknown figure 'nosuch'"),
    (["feddecorr-table1"], "unknown figure 'feddecorr-table1'"),
    (["feddecorr-fig2", "--workers", "0"], "--workers must be >= 1"),
    (["feddecorr-fig2", "--no-train", "--dry-run"], "--dry-run has no effect with --no-train"),
    (["feddecorr-fig2", "--no-train", "--workers", "2"], "--workers has no effect with --no-train"),
    (["feddecorr-fig2", "--no-train", "--rung", "a"], "--rung has no effect with --no-train"),
    (["feddecorr-fig2", "--rung", "b"], "--rung b: no such rung in --rungs"),
])
def test_bad_entries_and_options_are_one_line(tmp_path, args, message):
    (tmp_path / "r.yaml").write_text("rungs:\n- name: a\n")
    res = invoke("ladder", *args, "--preset", "quick", "--rungs", tmp_path / "r.yaml", "--store", tmp_path / "st",
                 "--out", tmp_path / "lad")
    assert res.exit_code == 2 and message in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.output
    assert not (tmp_path / "lad").exists()


def test_a_verdict_that_differs_on_the_other_sample_is_not_resolved():
    from collapse_lab.analysis.ladder import across_samples

    def rec(rung, *words, matched=True):
        return {"rung": rung, "entry": "e", "regime": {"matched": matched},
                "claims": [{"text": f"c{i}", "verdict": w, "holds": w == "holds"} for i, w in enumerate(words)]}

    a = [rec("r1", "holds", "refuted", "holds"), rec("r2", "holds"), {"rung": "r3", "entry": "e", "na": "x"}]
    b = [rec("r1", "holds", "refuted", "not resolved at this scale"), rec("r9", "holds")]
    got = across_samples(a, b)
    assert [(c["rung"], c["claim"], c["verdict"], c["agree"]) for c in got] == [
        ("r1", 1, "holds", True), ("r1", 2, "refuted", True), ("r1", 3, "not resolved at this scale", False)]
    # the words carry the regime: refuted on both samples at an unmatched regime says so
    got = across_samples([rec("r1", "refuted", matched=False)], [rec("r1", "refuted", matched=False)])
    assert got[0]["verdict"] == "refuted at an unmatched regime" and got[0]["agree"]


def test_other_sample_must_be_other_images(tmp_path):
    (tmp_path / "r.yaml").write_text("rungs:\n- name: a\n")
    args = ["ladder", "feddecorr-fig2", "--preset", "quick", "--rungs", tmp_path / "r.yaml", "--store", tmp_path / "st",
            "--out", tmp_path / "lad"]
    res = invoke(*args, "--other-sample", tmp_path / "none")
    assert res.exit_code == 2 and "--other-sample" in res.stderr and "no such folder" in res.stderr, res.output
    (tmp_path / "c" / "records").mkdir(parents=True)  # a ladder's --out, but of other rungs
    res = invoke(*args, "--other-sample", tmp_path / "c")
    assert res.exit_code == 2 and "no record of these rungs and entries there" in res.stderr, res.output
    from collapse_lab.analysis.catalogue import pick
    from collapse_lab.analysis.features import FeatureSource

    (e,) = pick(["feddecorr-fig2"], "figure")
    _, fp = FeatureSource(split="test").dataset(entry_runs(e, "quick")[0])
    (tmp_path / "b" / "records").mkdir(parents=True)
    (tmp_path / "b" / "records" / "a--feddecorr-fig2.json").write_text(json.dumps({"data": {"test_sha256": fp}}))
    res = invoke(*args, "--other-sample", tmp_path / "b")
    assert res.exit_code == 2 and "computed on the same images as this ladder" in res.stderr, res.output
    assert not (tmp_path / "lad").exists()


def test_the_effect_shown_is_the_one_that_decides():
    from collapse_lab.analysis.ladder import effect_text

    effs = [{"mean": -6.6, "low": -15.7, "high": 2.4, "verdict": "not resolved at this scale"},
            {"mean": -3.0, "low": -5.0, "high": -1.0, "verdict": "refuted"},
            {"mean": 4.0, "low": 1.0, "high": 7.0, "verdict": "holds"}]
    assert effect_text({"verdict": "refuted", "effects": effs}) == "-3 [-5, -1]"
    assert effect_text({"verdict": "not resolved at this scale", "effects": effs}) == "-6.6 [-15.7, 2.4]"
    assert effect_text({"verdict": "holds", "effects": effs[2:]}) == "4 [1, 7]"
    assert effect_text({"holds": True}) == ""
    # not resolved in every panel: the one furthest from holding for its spread (mean / half-width
    # -0.304 / 0.320 = -0.95), not the widest (0.199 [-0.888, 1.286], whose mean points the claimed way)
    panels = [{"mean": -0.304, "low": -0.624, "high": 0.016}, {"mean": -0.256, "low": -0.533, "high": 0.021},
              {"mean": 0.199, "low": -0.888, "high": 1.286}, {"mean": -0.195, "low": -0.622, "high": 0.232}]
    open_ = {"verdict": "not resolved at this scale",
             "effects": [dict(e, verdict="not resolved at this scale") for e in panels]}
    assert effect_text(open_) == "-0.304 [-0.624, 0.016]"


def test_a_claim_keeps_its_column_whatever_its_place_in_a_record():
    from collapse_lab.catalogue.ladder_report import claim_columns, claims_table

    def rec(rung, *texts):
        return {"rung": rung, "entry": "e", "regime": {"matched": False, "runs": []},
                "claims": [{"text": t, "verdict": "holds", "holds": True} for t in texts]}

    recs = [rec("old", "t1", "t2"), rec("new", "t1", "t3", "t2")]
    assert claim_columns(recs) == {("e", "t1"): 1, ("e", "t2"): 2, ("e", "t3"): 3}
    rows = {line.split(" | ")[1]: line for line in claims_table(recs)[2:]}
    assert rows["2. t2"].count("holds at an unmatched regime") == 2 and rows["3. t3"].count("n/a") == 1


def test_the_ladder_figure_is_readable_at_a_glance():
    """Cell values at >= 8 pt, three significant digits, white on the dark verdict colours
    (a dark 6-pt number on red could not be read)."""
    from collapse_lab.analysis.plots.ladder import draw

    cells = {("r1", "fig2 claim 1"): ("refuted", "-11.8333"), ("r1", "fig2 claim 2"): ("not resolved at this scale", "0.009695")}
    fig = draw(["r1"], ["fig2 claim 1", "fig2 claim 2"], cells, {"r1": False}, "t")
    texts = {t.get_text(): t for t in fig.axes[0].texts}
    assert set(texts) == {"-11.8", "0.0097"}
    assert texts["-11.8"].get_color() == "white" and texts["0.0097"].get_color() == "black"
    assert min(t.get_fontsize() for t in texts.values()) >= 8
    assert min(t.get_fontsize() for t in fig.axes[0].get_yticklabels()) >= 8
