"""The paper path without a GPU: ``--smoke`` trains every run of an entry cut to one round
on a data subset, in a store of its own, and renders it marked; ``--dry-run`` plans runs,
checkpoint volume and compute time from the project's measurements."""
from __future__ import annotations

import json
import math

import pytest
import torch
from click.testing import CliRunner

from collapse_lab.plan import entry_runs
from collapse_lab.analysis.catalogue import pick
from collapse_lab.plan.estimate import MEASURED, estimate, kept_checkpoints, model_facts, rate
from collapse_lab.cli import cli
from collapse_lab.config import RunConfig
from collapse_lab.data.base import Dataset, stratified_subset
from collapse_lab.config import smoke_of
from tests.paper_data import write_paper_data


@pytest.fixture(scope="module")
def paper_root(tmp_path_factory):
    return write_paper_data(tmp_path_factory.mktemp("paper_data"))


def test_stratified_subset_keeps_every_domain_and_class_in_order():
    y = torch.tensor([0, 1, 0, 1, 0, 1, 2, 2, 2, 0])
    d = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
    ds = Dataset("t", torch.arange(10).float()[:, None], y, torch.arange(4).float()[:, None], torch.tensor([0, 1, 2, 2]),
                 3, train_domain=d, test_domain=torch.tensor([0, 0, 1, 1]), domains=["a", "b"])
    sub = stratified_subset(ds, train=5, test=3)
    # 5 groups (domain, class) present: one sample each, the first in stored order, order kept
    assert sub.train_x[:, 0].tolist() == [0, 1, 4, 5, 6]
    assert sub.train_domain.tolist() == [0, 0, 1, 1, 1] and sub.train_y.tolist() == [0, 1, 0, 1, 2]
    assert sub.test_y.tolist() == [0, 1, 2] and sub.test_domain.tolist() == [0, 0, 1]  # 3 groups: one each
    # more groups than samples: a strict cap, one sample of a group, the domains taking turns
    # (domain a's class 0, b's class 0, a's class 1, ...), so both domains stay
    sub = stratified_subset(ds, train=3, test=2)
    assert sub.train_x[:, 0].tolist() == [0, 1, 4] and sub.train_domain.tolist() == [0, 0, 1]
    assert sub.test_y.tolist() == [0, 2] and sub.test_domain.tolist() == [0, 1]


def test_smoke_form_keeps_what_is_computed_and_cuts_its_length():
    cfg = RunConfig(dataset="cifar10", model="mobilenetv2", method="moon", reg="feddecorr", alpha=0.05, rounds=100,
                    local_epochs=10, min_size=10, augment="crop+flip", precision="bf16")
    s = smoke_of(cfg)
    same = ("dataset", "model", "method", "reg", "alpha", "augment", "precision", "partition", "batch_size", "lr")
    assert all(getattr(s, k) == getattr(cfg, k) for k in same)
    assert (s.rounds, s.local_epochs, s.min_size, s.probe, s.smoke, s.keep_local) == (1, 1, 0, 0, True, "none")
    assert s.run_name() != cfg.run_name() and smoke_of(cfg, keep_clients=True).keep_local == "all"


def test_checkpoint_volume_and_time_from_a_hand_count():
    cfg = RunConfig(dataset="cifar10", model="resnet20", rounds=3, clients=4, sample_fraction=0.5, local_epochs=2,
                    keep_local="all")
    # ResNet-20: 269,722 parameters and 2 x 688 BatchNorm running statistics in float32, plus
    # 19 int64 batch counters
    size, mflop = model_facts("resnet20", 10, (3, 32, 32))
    assert size == (269_722 + 2 * 688) * 4 + 19 * 8
    assert kept_checkpoints(cfg) == (3 + 1) + 2 * 3  # globals of rounds 0..3, two clients a round
    plan = estimate([cfg])
    (row,) = plan["models"]
    assert row["bytes"] == size * 10 and plan["total"]["runs"] == 1
    images = 3 * (2 * 50_000 * 2 / 4 + 10_000 / 3)  # rounds x (epochs x the participants' data + test / 3)
    assert math.isclose(row["images"], images)
    r, _ = rate("H100", mflop)
    assert math.isclose(row["hours"]["H100"], images / r / 3600)
    # the measured model gets its measured rate; others scale with FLOPs
    model, shape, images_s, _ = MEASURED["H100"][0]
    assert math.isclose(rate("H100", model_facts(model, 10, shape)[1])[0], images_s)
    assert math.isclose(rate("H100", 2 * model_facts(model, 10, shape)[1])[0], images_s / 2)


def test_a_measured_model_gets_its_own_rate_before_a_flop_neighbour():
    # cnn-bn has the cnn's forward FLOPs (BatchNorm is not counted) but its own measured rate
    cnn, bn = (model_facts(m, 10, (3, 32, 32))[1] for m in ("cnn", "cnn-bn"))
    assert math.isclose(cnn, bn)
    own = {m: r for m, shape, r, _ in MEASURED["cpu-2core"] if shape == (3, 32, 32)}
    assert math.isclose(rate("cpu-2core", bn, "cnn-bn")[0], own["cnn-bn"])
    assert math.isclose(rate("cpu-2core", cnn, "cnn")[0], own["cnn"])
    # an unmeasured model of the same FLOPs takes the nearest anchor's rate, scaled by FLOPs
    other = rate("cpu-2core", 2 * cnn, "some-net")[0]
    assert any(math.isclose(other, own[m] / 2) for m in ("cnn", "cnn-bn"))
    # the plan of a run: images over its own model's rate
    cfg = RunConfig(dataset="cifar10", model="cnn-bn", rounds=10, clients=10, local_epochs=10,
                    dataset_options={"max_train_per_class": 300, "max_test_per_class": 200})
    images = 10 * (10 * 3000 + 2000 / 3)
    plan = estimate([cfg])
    assert math.isclose(plan["models"][0]["images"], images)
    assert math.isclose(plan["total"]["hours"]["cpu-2core"] * 3600, images / own["cnn-bn"])


def test_linear_flops_are_two_multiply_adds_per_weight():
    _, mflop = model_facts("linear", 5, (12,))
    from collapse_lab.models import build_model

    m = build_model("linear", 5, (12,))
    weights = sum(p.numel() for n, p in m.named_parameters() if p.dim() == 2)
    assert math.isclose(mflop * 1e6, 2 * weights)


@pytest.mark.slow
def test_dry_run_plans_both_presets_and_trains_nothing(tmp_path):
    res = CliRunner().invoke(cli, ["figures", "feddecorr-fig1", "--dry-run", "--json", "--store", str(tmp_path / "s")])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    paper = out["presets"]["paper"]
    assert paper["total"]["runs"] == 3 and paper["models"][0]["model"] == "resnet20"
    assert paper["total"]["hours"]["H100"] > 0 and not (tmp_path / "s").exists()
    # --smoke plans the smoke runs: one round of one step on each participant's first
    # SMOKE_SAMPLES images, and a third of SMOKE_TEST test images (the estimate's eval weight)
    from collapse_lab.analysis.catalogue import pick
    from collapse_lab.catalogue.planning import plan
    from collapse_lab.config import clients_per_round
    from collapse_lab.data import SMOKE_SAMPLES, SMOKE_TEST
    from collapse_lab.plan import Plan

    res = CliRunner().invoke(cli, ["figures", "feddecorr-fig1", "--dry-run", "--json", "--smoke"])
    smoke = json.loads(res.stdout)["presets"]["paper"]["models"][0]
    configs, _, _ = plan(pick(["feddecorr-fig1"], "figure"), Plan("paper", smoke=True), tmp_path, lambda m: None)
    assert len(configs) == 3 and all(c.smoke and c.rounds == 1 for c in configs)
    want = sum(clients_per_round(c) * SMOKE_SAMPLES + SMOKE_TEST / 3 for c in configs)
    assert math.isclose(smoke["images"], want) and smoke["images"] < paper["models"][0]["images"] / 1000
    # the cpu preset's per-class caps hold without the data too: 10 rounds x (2 epochs x 10 x
    # 1,000 images + a third of 10 x 200), not the official 50,000 / 10,000; at the rate measured
    # for its cnn runs (4,013 images/s on 2 cores)
    res = CliRunner().invoke(cli, ["figures", "feddecorr-fig2", "--dry-run", "--json", "--data-root", str(tmp_path)])
    (cnn,) = json.loads(res.stdout)["presets"]["cpu"]["models"]
    assert cnn["runs"] == 12 and math.isclose(cnn["images"], 12 * 10 * (2 * 10_000 + 2_000 / 3))  # 4 alphas x 3 seeds
    assert math.isclose(cnn["hours"]["cpu-2core"], cnn["images"] / 4_013 / 3600)
    # a --preset named plans that preset alone; none named plans all three
    res = CliRunner().invoke(cli, ["figures", "feddecorr-fig2", "--dry-run", "--json", "--preset", "cpu"])
    assert list(json.loads(res.stdout)["presets"]) == ["cpu"]
    assert list(json.loads(CliRunner().invoke(cli, ["tables", "--dry-run", "--json"]).stdout)["presets"]) == \
        ["quick", "cpu", "paper"]


@pytest.mark.slow
def test_smoke_and_real_stores_never_mix(tmp_path, paper_root):
    runner = CliRunner()
    smoke = tmp_path / "smoke"
    res = runner.invoke(cli, ["figures", "feddecorr-fig1", "--preset", "paper", "--smoke", "--store", str(smoke),
                              "--out", str(tmp_path / "fig"), "--data-root", str(paper_root), "--json"])
    assert res.exit_code == 0, res.output
    rec = json.loads(res.stdout)
    (entry,) = rec["entries"]
    assert rec["smoke"] and all(c["measured"] == "not checked (smoke)" and c["holds"] is None for c in entry["claims"])
    assert json.loads((tmp_path / "fig" / "feddecorr-fig1.json").read_text())["smoke"] is True
    assert (tmp_path / "fig" / "CLAIMS-paper-smoke.md").is_file() and (smoke / "SMOKE").is_file()
    metas = [json.loads(p.read_text()) for p in smoke.glob("*/run.json")]
    assert len(metas) == 3 and all(m["smoke"] and m["rounds"] == 1 and m["status"] == "complete" for m in metas)
    assert {m["model"] for m in metas} == {"resnet20"} and {m["model_revision"] for m in metas} == {2}
    # the smoke store given as the real store, to train and to the catalogue: refused, one line
    for args in (["train", "--store", str(smoke), "--rounds", "1"],
                 ["figures", "feddecorr-fig1", "--preset", "paper", "--store", str(smoke), "--no-train"]):
        res = runner.invoke(cli, args)
        assert res.exit_code == 2 and "is a smoke store" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    # a store of real runs given to --smoke: refused
    real = tmp_path / "real"
    assert runner.invoke(cli, ["train", "--store", str(real), "--rounds", "1", "--local-epochs", "1",
                               "--alpha", "inf"]).exit_code == 0
    res = runner.invoke(cli, ["figures", "feddecorr-fig1", "--preset", "paper", "--smoke", "--store", str(real)])
    assert res.exit_code == 2 and "holds real runs" in res.stderr


def test_a_smoke_run_whose_checkpoints_were_dropped_is_not_retrained(tmp_path):
    """tables --smoke keeps a run's metrics and drops its checkpoints: a second call skips it."""
    from collapse_lab.runspec.resolve import resolve_runs
    from collapse_lab.store import RunDir
    from collapse_lab.store.paths import check_smoke
    from collapse_lab.training.engine import train
    from collapse_lab.training.prepare import prepare

    store = check_smoke(tmp_path / "smoke", True)
    (cfg,) = [smoke_of(c) for c in resolve_runs({}, values={"dataset": "gaussian", "alphas": [0.5], "clients": 3})]
    (p,) = prepare([cfg], store)
    train(p)
    RunDir(p.path).drop_checkpoints("tables --smoke")
    assert not list(p.path.glob("round_*")) and RunDir(p.path).meta["checkpoints_dropped"] == "tables --smoke"
    (again,) = prepare([cfg], store, resume=True)
    assert again.action == "skip"
    (real,) = prepare([smoke_of(cfg, keep_clients=True)], store, resume=True)  # same identity, same decision
    assert real.action == "skip"


@pytest.mark.slow
def test_the_catalogue_precision_names_other_runs_and_is_said_beside_the_numbers(tmp_path):
    """figures/tables --precision: bf16 runs are other runs than fp32 ones (the name hashes
    the precision), and each record, figure note and table header says what the runs
    trained in, so a native-bf16 CPU's ``auto`` never passes for the documented fp32 numbers."""
    store, runner = tmp_path / "s", CliRunner()
    recs, names = {}, {}
    for p in ("fp32", "bf16"):
        res = runner.invoke(cli, ["figures", "feddecorr-fig2", "--smoke", "--precision", p, "--store", str(store),
                                  "--out", str(tmp_path / f"f-{p}"), "--json"])
        assert res.exit_code == 0, res.output
        recs[p] = json.loads(res.stdout)["entries"][0]
        names[p] = {c.run_name() for c in entry_runs(pick(["feddecorr-fig2"], "figure")[0], "quick", smoke=True,
                                                                                           precision=p)}
    assert recs["fp32"]["precision"] == "fp32" and recs["bf16"]["precision"] == "bf16"
    assert len(names["fp32"]) == len(names["bf16"]) == 4 and not names["fp32"] & names["bf16"]
    assert {d.name for d in store.iterdir() if d.is_dir()} >= names["fp32"] | names["bf16"]
    for p in ("fp32", "bf16"):
        for n in names[p]:
            assert json.loads((store / n / "run.json").read_text())["precision"] == p
    saved = {p: json.loads((tmp_path / f"f-{p}" / "feddecorr-fig2.json").read_text()) for p in ("fp32", "bf16")}
    assert saved["bf16"]["precision"] == "bf16" and any("bf16" in d for d in saved["bf16"]["differs"])
    assert not any("bf16" in d for d in saved["fp32"]["differs"])
    res = runner.invoke(cli, ["tables", "feddecorr-table10", "--smoke", "--precision", "bf16", "--store", str(store),
                              "--out", str(tmp_path / "t")])
    assert res.exit_code == 0, res.output
    assert "runs trained in bf16" in (tmp_path / "t" / "feddecorr-table10.md").read_text().splitlines()[2]
