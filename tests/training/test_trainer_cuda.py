"""CUDA graphs against uncaptured steps on the GPU, where both run the same kernels, and
float64 features on CUDA against the CPU (skipped without a GPU)."""
import dataclasses

import pytest
import torch

from collapse_lab.runspec.resolve import finalize
from collapse_lab.training import prepare as P
from collapse_lab.models import build_model
from tests.fixtures import random_images as synthetic_cifar
from tests.training.test_trainer import BASE, _rel_to_movement, _run

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@pytest.fixture
def deterministic_cudnn():
    # cudnn may pick algorithms with atomics (run-to-run differences); deterministic ones
    # make the captured and the eager step run the same arithmetic.
    old = torch.backends.cudnn.deterministic
    torch.backends.cudnn.deterministic = True
    yield
    torch.backends.cudnn.deterministic = old


@cuda
@pytest.mark.parametrize("precision,tol", [("fp32", 1e-5), ("bf16", 1e-3)])
def test_captured_graphs_match_the_eager_loop_on_cuda(precision, tol, deterministic_cudnn):
    ds = synthetic_cifar(192, 64, 0)
    cfg = dataclasses.replace(BASE, model="mobilenetv2", device="cuda", precision=precision, augment="crop+flip",
                              reg="feddecorr", clients=3, rounds=1)
    eager = _run(dataclasses.replace(cfg, cuda_graphs="off", parallel_clients=1), ds, 1)
    graph = _run(dataclasses.replace(cfg, cuda_graphs="on", parallel_clients=3), ds, 1)
    assert graph[3]["cuda_graphs"] and graph[3]["parallel_clients"] == 3
    init = P.init_model(finalize(cfg, dataset=ds), ds).state_dict()
    rel = _rel_to_movement(eager[0], graph[0], init)
    same = all(torch.equal(a[n], b[n]) for a, b in zip(eager[0], graph[0]) for n in a)
    print(f"{precision}: captured vs eager, |difference| / |movement| = {rel:.3e}, bit-identical: {same}")
    assert rel < tol
    for e, g in zip(eager[2], graph[2]):
        assert e[:3] == g[:3] and e[6:] == g[6:]  # same rounds, clients, epochs, samples and steps
        assert abs(e[3] - g[3]) < 50 * tol * max(1.0, abs(e[3]))


@cuda
def test_features_on_cuda_equal_cpu_float64():
    from collapse_lab.analysis.features.extract import extract_features

    ds = synthetic_cifar(16, 300, 1)
    torch.manual_seed(0)
    model = build_model("mobilenetv2", 10, (3, 32, 32))
    z_cpu = extract_features(model, ds.test_x, ds.to_float, torch.float64, "cpu", 128)
    z_gpu = extract_features(model, ds.test_x, ds.to_float, torch.float64, "cuda", 128)
    assert z_gpu.dtype == torch.float64 and z_gpu.device.type == "cpu"
    err = ((z_gpu - z_cpu).norm() / z_cpu.norm()).item()
    print(f"float64 features, cuda vs cpu: relative difference {err:.2e}")
    assert err < 1e-10
