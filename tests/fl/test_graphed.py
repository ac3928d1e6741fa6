"""Step programs and lanes (fl.graphed) against the eager loop (local.train_client).

On the CPU the programs run uncaptured and must give the eager loop's weights and loss
records bit for bit, with one lane or several in threads (at the same intra-op thread
count: a lane runs at its share of the threads, and 1 vs 2 threads round differently). The CUDA tests (skipped
without a GPU) compare captured graphs with the eager loop on the GPU, where both run
the same kernels."""
import dataclasses
import tempfile
from pathlib import Path

import pytest
import torch

from collapse_lab.bench.run import synthetic_cifar
from collapse_lab.config import RunConfig
from collapse_lab.errors import CollapseLabError
from collapse_lab.fl import engine as E
from collapse_lab.fl import fast as fastpath
from collapse_lab.fl.local import batch_sizes, batches
from collapse_lab.store import RunDir

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def test_batch_sizes_are_those_batches_gives():
    g = torch.Generator().manual_seed(0)
    for n in [1, 2, 3, 15, 16, 17, 18, 31, 32, 33, 64, 65, 100]:
        for b in [1, 2, 16, 64]:
            assert batch_sizes(n, b) == {len(t) for t in batches(n, b, g)}, (n, b)


def _run(cfg: RunConfig, ds, rounds_out: int, rounds_log: bool = False):
    cfg = E.resolve_options(cfg, ds.num_classes)
    part = E.make_partition(cfg, ds)
    with tempfile.TemporaryDirectory() as t:
        p = E.Prepared(cfg, ds, part, Path(t) / cfg.run_name(), "train")
        E.train(p, keep_memory=False)
        rd = RunDir(p.path)
        clients = [rd.load_client(rounds_out, k) for k in range(cfg.clients)]
        events = [(e["round"], e["client"], e["epoch"], e["ce"], e["reg"], e["loss"], e["samples"], e["steps"])
                  for e in rd.metrics() if e["event"] == "local_epoch"]
        out = clients, rd.load_global(rounds_out), events, rd.meta
        return (*out, [e for e in rd.metrics() if e["event"] == "round"]) if rounds_log else out


@pytest.fixture
def threads():
    """Sets the intra-op thread count for the test; restores it after."""
    old = torch.get_num_threads()
    yield torch.set_num_threads
    torch.set_num_threads(old)


BASE = RunConfig(dataset="cifar10", model="cnn", alpha=0.5, clients=4, rounds=2, local_epochs=2, batch_size=16,
                 lr=0.05, momentum=0.9, weight_decay=1e-4, device="cpu", min_size=5)


@pytest.mark.parametrize("method,model,reg,augment,lanes", [
    ("fedavg", "cnn", "feddecorr", "crop+flip", 1),
    ("fedavg", "cnn", "feddecorr", "crop+flip", 3),
    ("fedbn", "resnet20", "none", "none", 2),  # personal BatchNorm loaded into whichever replica trains the client
    ("fednova", "cnn", "decov", "none", 4),  # step counts enter the aggregation
])
def test_programs_equal_the_eager_loop_bit_for_bit(method, model, reg, augment, lanes, threads):
    threads(1)
    ds = synthetic_cifar(150 if model == "cnn" else 96, 24, 0)
    cfg = dataclasses.replace(BASE, method=method, model=model, reg=reg, augment=augment)
    eager = _run(dataclasses.replace(cfg, graphs="off"), ds, 2)
    prog = _run(dataclasses.replace(cfg, graphs="on", parallel_clients=lanes), ds, 2)
    assert eager[3]["parallel_clients"] == 0 and prog[3]["parallel_clients"] == min(lanes, 4)
    moved = 0.0
    init = E.init_model(E.resolve_options(cfg, 10), ds).state_dict()
    for a, b in zip(eager[0], prog[0]):
        for n in a:
            assert torch.equal(a[n], b[n]), n
            if a[n].is_floating_point():
                moved = max(moved, (a[n] - init[n]).abs().max().item())
    assert moved > 1e-3  # the clients trained
    assert all(torch.equal(eager[1][n], prog[1][n]) for n in eager[1])
    assert eager[2] == prog[2] and len(eager[2]) == 2 * 4 * 2  # rounds x clients x epochs, same numbers


def test_cpu_lanes_in_threads_run_at_their_share_of_the_threads(threads):
    """Two lanes on two intra-op threads: each lane's thread computes at one thread, so the
    clients equal the eager loop's at one thread bit for bit, and differ from the eager
    loop at two threads (which reduces in another order) only by round-off."""
    ds = synthetic_cifar(150, 24, 0)
    cfg = dataclasses.replace(BASE, reg="feddecorr", augment="crop+flip")
    threads(1)
    eager1 = _run(dataclasses.replace(cfg, graphs="off"), ds, 2)
    threads(2)
    eager2 = _run(dataclasses.replace(cfg, graphs="off"), ds, 2)
    prog = _run(dataclasses.replace(cfg, graphs="on", parallel_clients=2), ds, 2)
    assert torch.get_num_threads() == 2  # restored after the round
    assert prog[3]["parallel_clients"] == 2
    for a, b in zip(eager1[0], prog[0]):
        assert all(torch.equal(a[n], b[n]) for n in a)
    assert eager1[2] == prog[2]
    init = E.init_model(E.resolve_options(cfg, 10), ds).state_dict()
    assert 0 < _rel_to_movement(eager2[0], prog[0], init) < 1e-4


def test_an_error_in_a_lane_thread_reaches_the_caller():
    import copy

    from collapse_lab.fl import graphed
    from collapse_lab.fl.local import NO_HOOKS, FastPath
    from collapse_lab.models import build_model

    model = build_model("mlp", 3, (4,))
    g = torch.Generator().manual_seed(0)
    started = []

    def start(k):
        def f(m):
            started.append(k)
            if k == 1:
                raise ValueError("client 1 broke")
            return NO_HOOKS
        return f

    jobs = [graphed.Job(k, torch.randn(n, 4, generator=g), torch.randint(0, 3, (n,), generator=g),
                        torch.Generator().manual_seed(k), torch.Generator().manual_seed(9 + k), start=start(k),
                        on_step=lambda: steps.append(1))
            for k, n in enumerate([400, 40, 30, 20])]
    steps = []
    spec = graphed.StepSpec(lambda t: t, 0.1, 0.9, 0.0, None, 0.0, FastPath())
    lanes = [graphed.Lane(copy.deepcopy(model), spec, capture=False) for _ in range(2)]
    with pytest.raises(ValueError, match="client 1 broke"):
        graphed.train_round(lanes, jobs, epochs=50, batch_size=8, beta=0.0)
    # lane 0 holds client 0 (the largest) and is stopped at its next step: clients 2 and 3
    # of lane 1 never start, and client 0's 2,500 steps do not run to the end
    assert 2 not in started and 3 not in started and len(steps) < 50 * 50


def test_lanes_are_resolved_from_method_regularizer_and_device(threads):
    cpu, gpu = torch.device("cpu"), torch.device("cuda")
    r = lambda **kw: fastpath.resolve_lanes(dataclasses.replace(BASE, **kw), cpu, 4)  # noqa: E731
    threads(2)
    assert r() == 2  # auto on CPU: one lane per intra-op thread
    assert r(graphs="on") == 2 and r(graphs="off") == 0
    assert r(graphs="on", parallel_clients=9) == 4  # no more lanes than clients per round
    assert r(method="moon") == 0 and r(reg="feduv") == 0  # auto falls back to the eager loop
    threads(1)
    assert r() == 0  # one thread: nothing to run side by side
    assert r(graphs="on") == 1 and r(parallel_clients=3) == 3
    assert fastpath.resolve_lanes(BASE, gpu, 10) == fastpath.DEFAULT_LANES
    assert fastpath.resolve_lanes(dataclasses.replace(BASE, method="moon"), gpu, 10) == 0
    assert fastpath.resolve_lanes(dataclasses.replace(BASE, reg="feduv"), gpu, 10) == 0
    for kw, msg in [(dict(graphs="on", method="scaffold"), "scaffold"), (dict(graphs="on", reg="feduv"), "feduv"),
                    (dict(graphs="on", compile="default"), "--compile"),
                    (dict(graphs="off", parallel_clients=2), "--parallel-clients"),
                    (dict(method="moon", parallel_clients=2), "moon"),
                    (dict(graphs="maybe"), "--graphs"), (dict(graphs="on", parallel_clients=-1), ">= 0")]:
        with pytest.raises(CollapseLabError, match=msg):
            r(**kw)


def test_train_refuses_bad_graph_options_before_writing(tmp_path):
    from click.testing import CliRunner

    from collapse_lab.cli import cli

    res = CliRunner().invoke(cli, ["train", "--preset", "quick", "--alpha", "0.5", "--method", "moon", "--graphs", "on",
                                   "--device", "cpu", "--out", str(tmp_path / "runs")])
    assert res.exit_code == 2 and "--graphs on" in res.output and "moon" in res.output
    assert not (tmp_path / "runs").exists()


def _rel_to_movement(a: list[dict], b: list[dict], init: dict) -> float:
    num = sum(((x[n] - y[n]).double().norm() ** 2).item() for x, y in zip(a, b) for n in x if x[n].is_floating_point())
    den = sum(((x[n] - init[n]).double().norm() ** 2).item() for x in a for n in x if x[n].is_floating_point())
    return (num / den) ** 0.5


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
    eager = _run(dataclasses.replace(cfg, graphs="off"), ds, 1)
    graph = _run(dataclasses.replace(cfg, graphs="on", parallel_clients=3), ds, 1)
    assert graph[3]["captured"] and graph[3]["parallel_clients"] == 3
    init = E.init_model(E.resolve_options(cfg, 10), ds).state_dict()
    rel = _rel_to_movement(eager[0], graph[0], init)
    same = all(torch.equal(a[n], b[n]) for a, b in zip(eager[0], graph[0]) for n in a)
    print(f"{precision}: captured vs eager, |difference| / |movement| = {rel:.3e}, bit-identical: {same}")
    assert rel < tol
    for e, g in zip(eager[2], graph[2]):
        assert e[:3] == g[:3] and e[6:] == g[6:]  # same rounds, clients, epochs, samples and steps
        assert abs(e[3] - g[3]) < 50 * tol * max(1.0, abs(e[3]))


@cuda
def test_features_on_cuda_equal_cpu_float64():
    from collapse_lab.features.extract import extract_features
    from collapse_lab.models import build_model

    ds = synthetic_cifar(16, 300, 1)
    torch.manual_seed(0)
    model = build_model("mobilenetv2", 10, (3, 32, 32))
    z_cpu = extract_features(model, ds.test_x, ds.to_float, torch.float64, "cpu", 128)
    z_gpu = extract_features(model, ds.test_x, ds.to_float, torch.float64, "cuda", 128)
    assert z_gpu.dtype == torch.float64 and z_gpu.device.type == "cpu"
    err = ((z_gpu - z_cpu).norm() / z_cpu.norm()).item()
    print(f"float64 features, cuda vs cpu: relative difference {err:.2e}")
    assert err < 1e-10


def test_lanes_are_balanced_and_finish_together():
    from collapse_lab.fl import graphed
    from collapse_lab.fl.local import NO_HOOKS, FastPath, num_batches
    from collapse_lab.models import build_model

    sizes = [70, 12, 45, 33, 58, 20, 9]
    torch.manual_seed(0)
    model = build_model("mlp", 3, (4,))
    g = torch.Generator().manual_seed(0)
    order = []
    jobs = [graphed.Job(k, torch.randn(n, 4, generator=g), torch.randint(0, 3, (n,), generator=g),
                        torch.Generator().manual_seed(k), torch.Generator().manual_seed(100 + k),
                        start=lambda m: NO_HOOKS, on_step=lambda k=k: order.append(k)) for k, n in enumerate(sizes)]
    queues = graphed.assign(jobs, 3, 8, 2)
    loads = [sum(num_batches(len(j.y), 8) * 2 for j in q) for q in queues]
    assert sorted(j.client for q in queues for j in q) == list(range(7))
    assert max(loads) - min(loads) <= max(num_batches(n, 8) * 2 for n in sizes)  # LPT bound
    spec = graphed.StepSpec(lambda t: t, 0.1, 0.9, 0.0, None, 0.0, FastPath())
    import copy

    lanes = [graphed.Lane(copy.deepcopy(model), spec, capture=False) for _ in range(3)]
    out = graphed.train_round(lanes, jobs, epochs=2, batch_size=8, beta=0.0, threads=False)  # CUDA's order
    assert sorted(out) == list(range(7)) and len(order) == sum(loads)
    assert all(out[k].steps == num_batches(n, 8) * 2 for k, n in enumerate(sizes))
    # every lane issues its last step in the final stretch of the round, not one lane alone at the end
    lane_of = {j.client: i for i, q in enumerate(queues) for j in q}
    last = [max(t for t, k in enumerate(order) if lane_of[k] == i) for i in range(3)]
    assert min(last) >= len(order) - 3, (last, len(order))


def test_step_programs_are_made_once_per_lane_and_batch_size(threads):
    import copy

    from collapse_lab.fl import graphed
    from collapse_lab.fl.local import NO_HOOKS, FastPath
    from collapse_lab.models import build_model

    threads(2)
    model = build_model("mlp", 3, (4,))
    g = torch.Generator().manual_seed(0)
    data = [(torch.randn(n, 4, generator=g), torch.randint(0, 3, (n,), generator=g)) for n in (20, 13, 8, 30)]

    def jobs(r):
        return [graphed.Job(k, x, y, torch.Generator().manual_seed(10 * r + k), torch.Generator().manual_seed(k),
                            start=lambda m: NO_HOOKS) for k, (x, y) in enumerate(data)]

    spec = graphed.StepSpec(lambda t: t, 0.1, 0.9, 0.0, None, 0.0, FastPath())
    for in_threads in (False, True):
        lanes = [graphed.Lane(copy.deepcopy(model), spec, capture=False) for _ in range(2)]
        graphed.train_round(lanes, jobs(1), epochs=1, batch_size=8, beta=0.0, threads=in_threads)
        made = [(set(lane.programs), lane.prepare_seconds) for lane in lanes]
        # batch sizes 8 and the last batches 4, 5, 6 (20, 13, 30 samples); 8 divides 8
        assert set().union(*(m[0] for m in made)) == {8, 4, 5, 6}
        assert all(m[1] > 0 for m in made)
        graphed.train_round(lanes, jobs(2), epochs=1, batch_size=8, beta=0.0, threads=in_threads)
        assert [(set(lane.programs), lane.prepare_seconds) for lane in lanes] == made  # nothing made again
    # the engine logs the time per round, with lanes only
    ds = synthetic_cifar(150, 24, 0)
    for graphs, key in (("on", True), ("off", False)):
        *_, events = _run(dataclasses.replace(BASE, graphs=graphs), ds, 2, rounds_log=True)
        assert all(("prepare_seconds" in e) == key for e in events if e["round"] > 0)


def test_stop_with_lanes_stores_no_partial_round(tmp_path):
    ds = synthetic_cifar(150, 24, 0)
    cfg = E.resolve_options(dataclasses.replace(BASE, graphs="on", parallel_clients=2, rounds=1), 10)
    part = E.make_partition(cfg, ds)
    p = E.Prepared(cfg, ds, part, tmp_path / cfg.run_name(), "train")
    steps = []

    def on_step():
        steps.append(1)
        if len(steps) == 3:  # SIGINT arrives while the first two clients train
            E.STOP.requested = "SIGINT"

    try:
        with pytest.raises(E.Interrupted) as info:
            E.train(p, on_step=on_step, keep_memory=False)
    finally:
        E.STOP.requested = None
    run = RunDir(p.path)
    assert info.value.round == 1 and run.meta["rounds_complete"] == 0 and run.meta["status"] == "running"
    # the two clients under way finished; no other client was trained
    full = sum(E.num_batches(len(ix), cfg.batch_size) * cfg.local_epochs for ix in part.client_indices)
    assert len(steps) < full
    assert not (p.path / "round_1" / "global.safetensors").exists()
