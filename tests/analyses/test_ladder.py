"""``collapse-lab ladder`` (issue 48, item 2): rungs of overrides, each run's regime, the rule
of docs/scale.md and the claims per rung, against hand computations."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from collapse_lab.plan import entry_runs
from tests.fixtures import invoke



# the second rung extends the first's runs (rounds is not part of a run's name): the first's
# numbers are measured at round 3 before they grow to 4; two seeds of the entry's three (a
# rung's seed list replaces the entry's)
RUNGS = ("rungs:\n- name: r3\n  set: {rounds: 3, local_epochs: 1}\n  seeds: [0, 1]\n"
         "- name: r4\n  set: {rounds: 4, local_epochs: 1}\n  seeds: [0, 1]\n")


def _check_record(r: dict, rounds: int, store) -> None:
    """A rung's record against its runs in ``store``: each run's regime at ``rounds`` equals
    its metrics file (accuracy, the plateau, the curve), its spectra are kept in order, and
    every claim recomputed from the record alone equals the claim rendered from the store."""
    from collapse_lab.analysis.ladder import claims_of

    assert len(r["regime"]["runs"]) == 8 and len(r["claims"]) == 8 and r["format"] == 2
    for m in r["regime"]["runs"]:
        meta = json.loads((store / m["run"] / "run.json").read_text())
        assert meta["rounds"] == 4 and meta["local_epochs"] == 1 and m["round"] == rounds and 0 <= m["own_acc"] <= 1
        acc = {e["round"]: e["test_acc"] for e in map(json.loads, (store / m["run"] / "metrics.jsonl")
               .read_text().splitlines()) if e.get("event") == "round"}
        assert m["test_acc"] == acc[rounds] and m["plateau_points"] == pytest.approx(
            100 * (acc[rounds] - acc[rounds - 3]))
        assert m["dead_units"] <= m["units"] == 128
        # the evidence: the accuracy curve as logged, the spectra the claims are recomputed from
        assert m["acc_curve"] == [round(100 * acc[q], 6) for q in range(1, rounds + 1)]
        assert len(m["spectrum_global"]) == len(m["spectrum_client0"]) == 128
        assert m["spectrum_global"] == sorted(m["spectrum_global"], reverse=True)
    for stored, recomputed in zip(r["claims"], claims_of(r)[:len(r["claims"])]):
        assert stored["verdict"] == recomputed["verdict"] and stored["claimed_way_in"] == recomputed["claimed_way_in"]
        assert [e["mean"] for e in stored["effects"]] == pytest.approx([e["mean"] for e in recomputed["effects"]])


def _stamps(store) -> dict:
    return {p: p.stat().st_mtime_ns for p in store.glob("*/run.json")}


def _outputs(folder) -> dict:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p.suffix != ".pdf"}


def _climb_once(args, tmp_path) -> list[dict]:
    """The dry run says what trains; the climb trains it and writes a record per rung, the
    page and the table."""
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
        _check_record(r, rounds, tmp_path / "st")
    md = (tmp_path / "lad" / "LADDER.md").read_text()
    assert "| r3 | feddecorr-fig2 | rounds=3 local_epochs=1 seeds 0-1 |" in md and "## Claims x rungs" in md
    rows = (tmp_path / "lad" / "ladder.csv").read_text().splitlines()
    assert len(rows) == 1 + 2 * 8 and rows[0].startswith("rung,entry,claim,text,form,verdict")
    return recs


def _again_from_what_is_kept(args, tmp_path, recs) -> None:
    """The store gone, --no-train writes the same bytes from the records alone; with the store
    back, the same command trains nothing and gives the same numbers."""
    outs = _outputs(tmp_path / "lad")
    (tmp_path / "st").rename(tmp_path / "st-away")
    alone = invoke(*args, "--no-train")
    assert alone.exit_code == 0, alone.output
    assert _outputs(tmp_path / "lad") == outs
    (tmp_path / "st-away").rename(tmp_path / "st")
    assert (tmp_path / "lad" / "ladder.png").stat().st_size > 10_000
    stamp = _stamps(tmp_path / "st")
    again = invoke(*args, "--json")
    assert again.exit_code == 0, again.output
    assert again.stderr.count("(not trained again)") == 2 and "runs trained" not in again.stderr
    assert json.loads(again.stdout)["records"] == recs and _stamps(tmp_path / "st") == stamp
    dry = json.loads(invoke(*args, "--dry-run", "--json").stdout)
    assert [(r["runs"], r["to_train"], r["kept"]) for r in dry] == [(0, 0, ["feddecorr-fig2"])] * 2


def _a_new_rung_untrained(args, tmp_path, recs) -> None:
    """A rung without runs: --no-train says so and trains nothing; a kept record's cost is the
    estimate as it is now; --rung trains only the rungs it names."""
    stamp = _stamps(tmp_path / "st")
    (tmp_path / "rungs.yaml").write_text(RUNGS + "- name: r5\n  set: {rounds: 5, local_epochs: 1}\n")
    res = invoke(*args, "--no-train", "--json")
    assert res.exit_code == 0, res.output
    recs3 = json.loads(res.stdout)["records"]
    assert recs3[:2] == recs and recs3[2]["na"].startswith("not trained yet")
    kept = tmp_path / "lad" / "records" / "r3--feddecorr-fig2.json"
    kept.write_text(json.dumps({**json.loads(kept.read_text()), "estimated_seconds": 12345.6}))
    recs4 = json.loads(invoke(*args, "--no-train", "--json").stdout)["records"]
    assert recs4[0]["estimated_seconds"] == recs[0]["estimated_seconds"] != 12345.6 and recs4[:2] == recs
    assert "| r5 | feddecorr-fig2 | rounds=5 local_epochs=1 | not trained yet" in (tmp_path / "lad" / "LADDER.md").read_text()
    only = invoke(*args, "--rung", "r4", "--json")  # r5 is left untrained and says why, the kept ones are read
    assert only.exit_code == 0, only.output
    recs5 = json.loads(only.stdout)["records"]
    assert recs5[:2] == recs and recs5[2]["na"] == "not trained yet (--rung r4 trained the others)"
    assert "runs trained" not in only.stderr and _stamps(tmp_path / "st") == stamp
    dry5 = json.loads(invoke(*args, "--rung", "r5", "--dry-run", "--json").stdout)
    assert [(r["rung"], r["runs"], r["to_train"]) for r in dry5] == [("r5", 12, 12)]


@pytest.mark.slow
def test_a_ladder_keeps_each_rung_and_never_trains_it_twice(tmp_path):
    (tmp_path / "rungs.yaml").write_text(RUNGS)
    args = ["ladder", "feddecorr-fig2", "--preset", "quick", "--rungs", tmp_path / "rungs.yaml",
            "--store", tmp_path / "st", "--out", tmp_path / "lad"]
    recs = _climb_once(args, tmp_path)
    _again_from_what_is_kept(args, tmp_path, recs)
    _a_new_rung_untrained(args, tmp_path, recs)


def _timeless(r: dict) -> dict:
    """A record less the seconds a training took (the machine's, not the run's)."""
    reg = {k: v for k, v in r["regime"].items() if k != "train_seconds_sum"}
    reg["runs"] = [{k: v for k, v in m.items() if k != "train_seconds"} for m in reg["runs"]]
    return {**{k: v for k, v in r.items() if k not in ("wall_seconds", "rung_wall_seconds", "figure")}, "regime": reg}


def _same_figure(one, two) -> None:
    """Two renders of a figure (one from the store, one from kept evidence): the same panels,
    series, seeds and labels, the same curves and numbers to round-off; the image drawn."""
    f1, f2 = json.loads(one.read_text()), json.loads(two.read_text())
    assert [p["title"] for p in f1["values"]["panels"]] == [p["title"] for p in f2["values"]["panels"]]
    for p1, p2 in zip(f1["values"]["panels"], f2["values"]["panels"]):
        assert [(s["n"], s["label"]) for s in p1["series"]] == [(s["n"], s["label"]) for s in p2["series"]]
        assert {s["n"] for s in p1["series"]} == {2}
        assert p2.get("metrics", {}) == pytest.approx(p1.get("metrics", {}))
        for s1, s2 in zip(p1["series"], p2["series"]):
            assert s2["y"] == pytest.approx(s1["y"], abs=1e-12) and s2["metrics"] == pytest.approx(s1["metrics"])
    assert two.with_suffix(".png").stat().st_size > 10_000


def _no_train_keeps_what_a_store_holds(ladder, tmp_path, recs) -> None:
    """--no-train on a store that holds some of a rung's runs keeps their evidence and says how
    many; evidence of other images is not taken for these runs (a record names its test split's hash)."""
    import shutil

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
    assert [_timeless(r) for r in json.loads(two.stdout)["records"]] == [_timeless(r) for r in recs]
    for entry in entries:  # the figures drawn from the evidence: the curves and numbers the store's render drew
        _same_figure(tmp_path / "lad" / "r3" / f"{entry}.json", tmp_path / "lad2" / "r3" / f"{entry}.json")
    _no_train_keeps_what_a_store_holds(ladder, tmp_path, recs)


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
    from collapse_lab.judging.ladder import effect_text

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
