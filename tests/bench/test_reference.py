"""The fast path against the reference loop built like the official code: same partition,
same steps and, on CPU in fp32 without augmentation, the same weights after one local
epoch (to fp32 round-off); and ``collapse-lab bench`` end to end."""
import json

import pytest
import torch
from click.testing import CliRunner

from collapse_lab.bench.reference_round import reference_round
from collapse_lab.bench.run import fast_rounds, run_config, settings_for, synthetic_cifar
from collapse_lab.cli import cli
from collapse_lab.training.prepare import init_model, make_partition
from collapse_lab.training.local import num_batches
from collapse_lab.store import RunDir


# Contiguous fp32: the same kernels in the same order, so the same bits. On two intra-op
# threads the fast path trains two clients at once, each at one thread (training.trainer), so the
# reference runs at one thread too: 1 and 2 threads sum in different orders. channels_last
# reorders the convolution sums: within fp32 round-off for the CNN. (With BatchNorm the
# fp32 gradients of either layout are 1e-3..1e-2 from float64 at these batch sizes, and
# the layouts differ from each other by that much: see docs/fast-path.md.)
@pytest.mark.parametrize("model,channels_last", [("cnn", True), ("cnn", False), ("resnet20", False)])
def test_fast_path_equals_reference_loop_after_one_epoch(tmp_path, model, channels_last):
    old_threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        _compare_after_one_epoch(tmp_path, model, channels_last)
    finally:
        torch.set_num_threads(old_threads)


def _compare_after_one_epoch(tmp_path, model, channels_last):
    s = settings_for("cpu", model=model, images=120, test_images=20, clients=3, local_epochs=1, rounds=1, warmup=0,
                 batch_size=16, augment="none", precision="fp32", channels_last=channels_last, device="cpu")
    cfg = run_config(s)
    ds = synthetic_cifar(s.images, s.test_images, seed=0)
    part = make_partition(cfg, ds)
    fast = fast_rounds(cfg, ds, part, tmp_path)
    run = RunDir(tmp_path / cfg.run_name())
    assert run.meta["parallel_clients"] == 2  # clients in lanes, one thread each
    torch.set_num_threads(1)

    # the partition the reference draws afresh is the one the fast run stored
    ref_part = make_partition(cfg, ds)
    stored = run.partition()
    assert all((a == b).all() for a, b in zip(stored.client_indices, ref_part.client_indices))

    model0 = init_model(cfg, ds)
    res = reference_round(cfg, ds, ref_part, model0, {k: v.clone() for k, v in model0.state_dict().items()}, 1,
                          torch.device("cpu"), workers=0, epochs=1)
    expected_steps = {k: num_batches(len(ix), cfg.batch_size) for k, ix in enumerate(part.client_indices)}
    assert res["steps"] == expected_steps
    assert fast[0]["steps"] == sum(expected_steps.values())

    init = init_model(cfg, ds).state_dict()
    for k, ref_state in res["clients"].items():
        got = run.load_client(1, k)
        assert set(got) == set(ref_state)
        moved = 0.0
        for name, v in ref_state.items():
            if v.is_floating_point() and channels_last:
                scale = max(v.abs().max().item(), 1e-3)
                assert (got[name] - v).abs().max().item() <= 2e-6 * scale, (k, name)
            else:
                assert torch.equal(got[name], v), (k, name)
            if v.is_floating_point():
                moved = max(moved, (v - init[name]).abs().max().item())
        assert moved > 1e-3  # local training changed the weights: the comparison has teeth
    g = run.load_global(1)
    for name, v in res["global"].items():
        if v.is_floating_point():
            assert torch.allclose(g[name], v, rtol=0, atol=2e-6 * max(v.abs().max().item(), 1e-3)), name


def test_reference_with_augmentation_trains_the_same_steps(tmp_path):
    s = settings_for("cpu", model="cnn", images=60, test_images=12, clients=2, local_epochs=2, rounds=1, warmup=0,
                 batch_size=16, augment="crop+flip+autoaugment", precision="fp32", device="cpu")
    cfg = run_config(s)
    ds = synthetic_cifar(s.images, s.test_images, seed=1)
    part = make_partition(cfg, ds)
    fast = fast_rounds(cfg, ds, part, tmp_path)
    m = init_model(cfg, ds)
    res = reference_round(cfg, ds, part, m, dict(m.state_dict()), 1, torch.device("cpu"), workers=0, epochs=2,
                          official_evals=True)
    assert sum(res["steps"].values()) == fast[0]["steps"] == sum(2 * num_batches(len(ix), 16) for ix in part.client_indices)


@pytest.mark.precision("fp32")  # compares with fp32 numbers, run names or round-off
def test_bench_cli_json(tmp_path):
    res = CliRunner().invoke(cli, ["bench", "--model", "cnn", "--images", "60", "--test-images", "12",
                                   "--local-epochs", "1", "--clients", "2", "--device", "cpu", "--repeats", "3",
                                   "--json"])
    assert res.exit_code == 0, res.output
    (r,) = json.loads(res.stdout)["results"]
    f, g = r["fast"], r["reference"]
    assert f["steps_per_round"] == g["steps_per_round"] and f["images_per_round"] == g["images_per_round"] == 60
    # the ratio is taken per alternating pair; its median is the middle one of the three
    fv, gv = f["images_per_second_spread"]["values"], g["images_per_second_spread"]["values"]
    assert len(fv) == len(gv) == 3
    ratios = sorted(a / b for a, b in zip(fv, gv))
    assert r["speedup_images_per_second"] == pytest.approx(ratios[1])
    assert (r["ratio"]["min"], r["ratio"]["max"]) == (pytest.approx(ratios[0]), pytest.approx(ratios[2]))
    assert f["images_per_second"] == pytest.approx(sorted(fv)[1])  # the median repeat is reported
    assert f["images_per_second"] == pytest.approx(f["images_per_round"] / f["seconds_per_round"])
    assert r["extraction"]["images"] == 12 and r["extraction"]["feature_dim"] == 256
    assert r["resolved"] == {"augment": "crop+flip", "precision": "fp32", "reference_precision": "fp32"}


@pytest.mark.parametrize("args,msg", [
    (["--workload", "huge"], "--workload 'huge': choose one of cpu, paper-cifar10"),
    (["--model", "vit"], "unknown model 'vit'"),
    (["--precision", "fp16"], "Invalid value for '--precision': 'fp16' is not one of 'auto', 'fp32', 'bf16'"),
    (["--augment", "crop+mixup"], "unknown step 'mixup'"),
    (["--images", "0"], "--images must be >= 1"),
    (["--compile", "fast"], "--compile 'fast'"),
])
def test_bench_bad_input(args, msg):
    res = CliRunner().invoke(cli, ["bench", *args])
    assert res.exit_code == 2
    assert msg in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_settings_are_the_papers_for_the_paper_preset():
    from collapse_lab.bench.run import settings_for

    s = settings_for("paper-cifar10", model="mobilenetv2")
    r = s.run  # the paper preset's CIFAR-10 run, resolved as `collapse-lab train` resolves it
    assert (s.images, s.test_images, r.clients, r.alpha, r.local_epochs, r.batch_size, r.lr, r.momentum,
            r.weight_decay, r.augment, r.rounds) == (50000, 10000, 10, 0.5, 10, 64, 0.01, 0.9, 1e-5, "crop+flip", 2)
    assert s.warmup == 1 and s.reference_epochs == 1


def test_reference_with_fewer_epochs_is_scaled_to_the_full_round():
    from collapse_lab.bench.run import _extrapolate

    timed = [{"seconds": 12.0, "train_seconds": 10.0, "images": 100, "steps": 4}]
    summary = {"seconds_per_round": 12.0, "images_per_second": 100 / 12.0, "images_per_round": 100}
    _extrapolate(summary, timed, 10.0)
    # 10 epochs of training at the measured rate plus the once-per-round 2 s
    assert summary["seconds_per_round"] == pytest.approx(102.0)
    assert summary["images_per_round"] == pytest.approx(1000)
    assert summary["images_per_second"] == pytest.approx(1000 / 102.0)
    assert summary["measured_seconds_per_round"] == 12.0


def test_bench_cli_extrapolates_when_the_reference_runs_fewer_epochs():
    res = CliRunner().invoke(cli, ["bench", "--model", "cnn", "--images", "40", "--test-images", "8", "--clients", "2",
                                   "--local-epochs", "2", "--reference-epochs", "1", "--device", "cpu", "--json"])
    assert res.exit_code == 0, res.output
    g = json.loads(res.stdout)["results"][0]["reference"]
    assert g["extrapolated_epochs_factor"] == 2.0 and g["images_per_round"] == 2 * g["measured_images_per_round"] == 80
