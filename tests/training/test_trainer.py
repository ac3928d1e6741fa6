"""The client trainer (training.trainer, training.schedule): one lane against several, hooks in lanes,
the schedule's balance and stops, the plan of lanes and CUDA graphs.

On the CPU several lanes must give one lane's weights and loss records bit for bit (at the
same intra-op thread count: a lane runs at its share of the threads, and 1 vs 2 threads
round differently), for methods with hooks too: each client's state travels in its own
hooks. The trainer itself is checked against the independent reference loop in
tests/bench/test_reference.py; captured graphs in test_trainer_cuda.py."""
import dataclasses
import tempfile
from pathlib import Path

import pytest
import torch

from collapse_lab.config import RunConfig
from collapse_lab.errors import CollapseLabError
from collapse_lab.training import engine as E
from collapse_lab.training.stops import Interrupted, StopFlag
from collapse_lab.training import fast as fastpath
from collapse_lab.partition import make_partition
from collapse_lab.runspec.resolve import finalize
from collapse_lab.training import prepare as P
from collapse_lab.training import schedule, trainer
from collapse_lab.training.fastpath import FastPath
from collapse_lab.methods.hooks import NO_HOOKS
from collapse_lab.training.local import batch_sizes, batches, num_batches
from collapse_lab.models import build_model
from collapse_lab.store import RunDir
from tests.fixtures import random_images as synthetic_cifar

def test_batch_sizes_are_those_batches_gives():
    g = torch.Generator().manual_seed(0)
    for n in [1, 2, 3, 15, 16, 17, 18, 31, 32, 33, 64, 65, 100]:
        for b in [1, 2, 16, 64]:
            assert batch_sizes(n, b) == {len(t) for t in batches(n, b, g)}, (n, b)


def _run(cfg: RunConfig, ds, rounds_out: int, rounds_log: bool = False):
    cfg = finalize(cfg, dataset=ds)
    part = make_partition(cfg, ds)
    with tempfile.TemporaryDirectory() as t:
        p = P.Prepared(cfg, ds, part, Path(t) / cfg.run_name(), "train")
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
    ("fedavg", "cnn", "feddecorr", "crop+flip", 3),
    # personal BatchNorm loaded into whichever replica trains the client (3.6 s: outside the fast subset)
    pytest.param("fedbn", "resnet20", "none", "none", 2, marks=pytest.mark.slow),
    ("fednova", "cnn", "decov", "none", 4),  # step counts enter the aggregation
    # methods with hooks: each client's state (MOON's previous model, SCAFFOLD's x and
    # correction, FedETF's class sums, FedProx's anchor) travels in its own hooks; SCAFFOLD
    # stays in the fast subset for them all (the other three are the same mechanism)
    pytest.param("moon", "cnn", "none", "none", 2, marks=pytest.mark.slow),
    ("scaffold", "cnn", "feddecorr", "none", 3),
    pytest.param("fedetf", "cnn", "none", "none", 2, marks=pytest.mark.slow),
    pytest.param("fedprox", "cnn", "feduv", "none", 2, marks=pytest.mark.slow),
])
def test_several_lanes_equal_one_lane_bit_for_bit(method, model, reg, augment, lanes, threads):
    threads(1)
    ds = synthetic_cifar(150 if model == "cnn" else 96, 24, 0)
    cfg = dataclasses.replace(BASE, method=method, model=model, reg=reg, augment=augment)
    if method == "fedetf":
        cfg = dataclasses.replace(cfg, method_options={"gmv_warmup": 2})  # the memory vectors enter in round 2
    eager = _run(dataclasses.replace(cfg, parallel_clients=1), ds, 2)
    prog = _run(dataclasses.replace(cfg, parallel_clients=lanes), ds, 2)
    assert eager[3]["parallel_clients"] == 1 and prog[3]["parallel_clients"] == min(lanes, 4)
    moved = 0.0
    init = P.init_model(finalize(cfg, dataset=ds), ds).state_dict()
    for a, b in zip(eager[0], prog[0]):
        for n in a:
            assert torch.equal(a[n], b[n]), n
            if a[n].is_floating_point():
                moved = max(moved, (a[n] - init[n]).abs().max().item())
    assert moved > 1e-3  # the clients trained
    assert all(torch.equal(eager[1][n], prog[1][n]) for n in eager[1])
    assert eager[2] == prog[2] and len(eager[2]) == 2 * 4 * 2  # rounds x clients x epochs, same numbers
    if method in ("moon", "fedprox"):  # the method's term was computed and logged
        assert all(e[5] > e[3] for e in eager[2])


@pytest.mark.precision("fp32")  # compares with fp32 numbers, run names or round-off
def test_cpu_lanes_in_threads_run_at_their_share_of_the_threads(threads):
    """Two lanes on two intra-op threads: each lane's thread computes at one thread, so the
    clients equal the eager loop's at one thread bit for bit, and differ from the eager
    loop at two threads (which reduces in another order) only by round-off."""
    ds = synthetic_cifar(150, 24, 0)
    cfg = dataclasses.replace(BASE, reg="feddecorr", augment="crop+flip")
    threads(1)
    eager1 = _run(dataclasses.replace(cfg, parallel_clients=1), ds, 2)
    threads(2)
    eager2 = _run(dataclasses.replace(cfg, parallel_clients=1), ds, 2)
    prog = _run(dataclasses.replace(cfg, parallel_clients=2), ds, 2)
    assert torch.get_num_threads() == 2  # restored after the round
    assert prog[3]["parallel_clients"] == 2
    for a, b in zip(eager1[0], prog[0]):
        assert all(torch.equal(a[n], b[n]) for n in a)
    assert eager1[2] == prog[2]
    init = P.init_model(finalize(cfg, dataset=ds), ds).state_dict()
    assert 0 < _rel_to_movement(eager2[0], prog[0], init) < 1e-3  # fp32 round-off, amplified over 8 steps


def test_an_error_in_a_lane_thread_reaches_the_caller():
    import copy

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

    jobs = [trainer.Job(k, torch.randn(n, 4, generator=g), torch.randint(0, 3, (n,), generator=g),
                        torch.Generator().manual_seed(k), torch.Generator().manual_seed(9 + k), start=start(k),
                        on_step=lambda: steps.append(1))
            for k, n in enumerate([400, 40, 30, 20])]
    steps = []
    spec = trainer.StepSpec(lambda t: t, 0.1, 0.9, 0.0, None, 0.0, FastPath())
    lanes = [trainer.Lane(copy.deepcopy(model), spec) for _ in range(2)]
    with pytest.raises(ValueError, match="client 1 broke"):
        list(schedule.train_round(lanes, jobs, epochs=50, batch_size=8, beta=0.0))
    # lane 0 holds client 0 (the largest) and is stopped at its next step: clients 2 and 3
    # of lane 1 never start, and client 0's 2,500 steps do not run to the end
    assert 2 not in started and 3 not in started and len(steps) < 50 * 50


def test_the_trainer_plan_follows_method_regularizer_and_device(threads):
    cpu, gpu = torch.device("cpu"), torch.device("cuda")
    r = lambda **kw: fastpath.plan_trainer(dataclasses.replace(BASE, **kw), cpu, 4)  # noqa: E731
    threads(2)
    assert r() == fastpath.TrainerPlan(2, False)  # auto on CPU: one lane per intra-op thread
    assert r(parallel_clients=9).lanes == 4  # no more lanes than clients per round
    assert r(method="moon").lanes == 1 and r(reg="feduv").lanes == 1  # auto: one at a time, as measured
    assert r(method="moon", parallel_clients=2).lanes == 2  # hooks work on lanes when asked for
    threads(1)
    assert r().lanes == 1  # one thread: nothing to run side by side
    assert r(parallel_clients=3).lanes == 3
    g = lambda **kw: fastpath.plan_trainer(dataclasses.replace(BASE, **kw), gpu, 10)  # noqa: E731
    assert g() == fastpath.TrainerPlan(fastpath.DEFAULT_LANES, True)
    for kw in (dict(method="moon"), dict(reg="feduv"), dict(compile="default")):  # auto falls back, and says why
        plan = g(**kw)
        assert not plan.capture and plan.lanes == 1 and "CUDA graphs off" in plan.note
    assert g(cuda_graphs="off") == fastpath.TrainerPlan(1, False)
    for kw, msg in [(dict(cuda_graphs="on", method="scaffold"), "scaffold"), (dict(cuda_graphs="on", reg="feduv"), "feduv"),
                    (dict(cuda_graphs="on", compile="default"), "--compile"),
                    (dict(compile="default", parallel_clients=2), "--parallel-clients"),
                    (dict(cuda_graphs="maybe"), "--cuda-graphs"), (dict(parallel_clients=-1), ">= 0")]:
        with pytest.raises(CollapseLabError, match=msg):
            g(**kw)
    with pytest.raises(CollapseLabError, match="needs a CUDA device"):
        r(cuda_graphs="on")


def test_train_refuses_bad_trainer_options_before_writing(tmp_path):
    from click.testing import CliRunner

    from collapse_lab.cli import cli

    res = CliRunner().invoke(cli, ["train", "--preset", "quick", "--alpha", "0.5", "--cuda-graphs", "on",
                                   "--device", "cpu", "--store", str(tmp_path / "runs")])
    assert res.exit_code == 2 and "--cuda-graphs on needs a CUDA device" in res.output
    assert not (tmp_path / "runs").exists()


def _rel_to_movement(a: list[dict], b: list[dict], init: dict) -> float:
    num = sum(((x[n] - y[n]).double().norm() ** 2).item() for x, y in zip(a, b) for n in x if x[n].is_floating_point())
    den = sum(((x[n] - init[n]).double().norm() ** 2).item() for x in a for n in x if x[n].is_floating_point())
    return (num / den) ** 0.5


def _jobs(data, seed, on_step=None):
    torch.manual_seed(1)
    init = build_model("mlp", 3, (4,)).state_dict()

    def start(m):  # every client starts from the same model, whichever lane trains it
        m.load_state_dict(init)
        return NO_HOOKS

    return [trainer.Job(k, x, y, torch.Generator().manual_seed(seed + k), torch.Generator().manual_seed(100 + k),
                        start=start, on_step=(lambda k=k: on_step(k)) if on_step else None)
            for k, (x, y) in enumerate(data)]


def _lanes(n):
    import copy

    torch.manual_seed(0)
    model = build_model("mlp", 3, (4,))
    spec = trainer.StepSpec(lambda t: t, 0.1, 0.9, 0.0, None, 0.0, FastPath())
    return [trainer.Lane(copy.deepcopy(model), spec) for _ in range(n)]


def _data(sizes):
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(n, 4, generator=g), torch.randint(0, 3, (n,), generator=g)) for n in sizes]


def test_lanes_are_balanced_and_finish_together():
    sizes = [70, 12, 45, 33, 58, 20, 9]
    order = []
    jobs = _jobs(_data(sizes), 0, order.append)
    queues = schedule.assign(jobs, 3, 8, 2)
    loads = [sum(num_batches(len(j.y), 8) * 2 for j in q) for q in queues]
    assert sorted(j.client for q in queues for j in q) == list(range(7))
    assert max(loads) - min(loads) <= max(num_batches(n, 8) * 2 for n in sizes)  # LPT bound
    out = list(schedule.train_round(_lanes(3), jobs, epochs=2, batch_size=8, beta=0.0, threads=False))  # CUDA's order
    assert [t.client for t in out] == list(range(7)) and len(order) == sum(loads)  # yielded in job order
    assert all(out[k].steps == num_batches(n, 8) * 2 for k, n in enumerate(sizes))
    # every lane issues its last step in the final stretch of the round, not one lane alone at the end
    lane_of = {j.client: i for i, q in enumerate(queues) for j in q}
    last = [max(t for t, k in enumerate(order) if lane_of[k] == i) for i in range(3)]
    assert min(last) >= len(order) - 3, (last, len(order))


def test_every_schedule_yields_the_same_clients(threads):
    """One lane, lanes in threads and stride-scheduled lanes: the same weights and records
    for every client (one intra-op thread: all three compute at one thread)."""
    threads(1)
    data = _data([20, 13, 8, 30])
    outs = []
    for n, in_threads in ((1, None), (2, True), (3, False)):
        outs.append(list(schedule.train_round(_lanes(n), _jobs(data, 10), epochs=2, batch_size=8, beta=0.0,
                                              threads=in_threads)))
    for out in outs[1:]:
        assert [t.client for t in out] == [0, 1, 2, 3]
        for a, b in zip(outs[0], out):
            assert a.history == b.history and a.steps == b.steps
            assert all(torch.equal(a.state[k], b.state[k]) for k in a.state)


def test_a_stop_lets_the_clients_under_way_finish_and_starts_no_other(tmp_path):
    ds = synthetic_cifar(150, 24, 0)
    for lanes in (1, 2):
        cfg = finalize(dataclasses.replace(BASE, parallel_clients=lanes, rounds=1), dataset=ds)
        part = make_partition(cfg, ds)
        p = P.Prepared(cfg, ds, part, tmp_path / f"{lanes}" / cfg.run_name(), "train")
        steps, stop = [], StopFlag()

        def on_step():
            steps.append(1)
            if len(steps) == 3:  # SIGINT arrives while the first client(s) train
                stop.request("SIGINT")

        with pytest.raises(Interrupted) as info:
            E.train(p, on_step=on_step, keep_memory=False, stop=stop)
        run = RunDir(p.path)
        assert info.value.round == 1 and run.meta["rounds_complete"] == 0 and run.meta["status"] == "running"
        # the client(s) under way finished and were stored; no other client was trained
        done = sorted(part.sizes.tolist(), reverse=True)[:lanes] if lanes > 1 else [part.sizes[0]]
        assert len(steps) == sum(num_batches(n, cfg.batch_size) * cfg.local_epochs for n in done)
        assert len(list((p.path / "round_1").glob("client_*.safetensors"))) == lanes
        assert not (p.path / "round_1" / "global.safetensors").exists()
