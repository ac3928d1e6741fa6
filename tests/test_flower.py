"""A real Flower simulation in the shape of Flower's quickstart-pytorch (a logits-only ``Net``
trained on inputs normalised with ``Normalize(0.5, 0.5)``, a ClientApp that trains and
evaluates, a ServerApp with ``strategy.start(..., evaluate_fn=...)``), with only the lines
docs/flower.md adds, recorded into a store and analysed. Skips without the flower extra."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from click.testing import CliRunner

flwr = pytest.importorskip("flwr")

from flwr.app import ArrayRecord, ConfigRecord, Context, Message, MetricRecord, RecordDict  # noqa: E402
from flwr.clientapp import ClientApp  # noqa: E402
from flwr.serverapp import Grid, ServerApp  # noqa: E402
from flwr.serverapp.strategy import FedAvg  # noqa: E402

CLIENTS, ROUNDS, LR, EPOCHS, BATCH = 2, 2, 0.05, 1, 32  # Flower simulates 2 SuperNodes by default


class Net(nn.Module):
    """The quickstart's kind of model: its own class, logits only, outside collapse-lab."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(1, 6, 3)
        self.fc1 = nn.Linear(6 * 6 * 6, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(F.relu(self.conv(x)).flatten(1))))


def _data():
    from collapse_lab.data import load_dataset

    return load_dataset("digits")


def _inputs(x: torch.Tensor, dtype=torch.float32) -> torch.Tensor:
    """The app's own preprocessing: ToTensor() (x / 16 for digits) then Normalize(0.5, 0.5)."""
    return (x.to(dtype) / 16.0 - 0.5) / 0.5


def _part(pid: int):
    ds = _data()
    return np.flatnonzero(ds.train_y.numpy() % CLIENTS == pid)  # a label split: client k holds classes = k mod 3


def _accuracy(m: nn.Module, x, y) -> float:
    with torch.no_grad():
        return float((m(_inputs(x)).argmax(1) == y).float().mean())


client_app = ClientApp()


@client_app.train()
def _train(msg: Message, context: Context):
    pid = int(context.node_config["partition-id"])
    ds, ix = _data(), _part(pid)
    m = Net()
    m.load_state_dict(msg.content["arrays"].to_torch_state_dict())
    opt = torch.optim.SGD(m.parameters(), lr=msg.content["config"]["lr"], momentum=0.9)
    g = torch.Generator().manual_seed(pid)
    for _ in range(EPOCHS):
        for b in torch.from_numpy(ix)[torch.randperm(len(ix), generator=g)].split(BATCH):
            opt.zero_grad()
            F.cross_entropy(m(_inputs(ds.train_x[b])), ds.train_y[b]).backward()
            opt.step()
    counts = np.bincount(ds.train_y.numpy()[ix], minlength=10).tolist()
    metrics = {"train_loss": 0.0, "num-examples": len(ix),
               "partition-id": pid, "label-counts": counts}  # + the line docs/flower.md adds
    return Message(content=RecordDict({"arrays": ArrayRecord(m.state_dict()), "metrics": MetricRecord(metrics)}),
                   reply_to=msg)


@client_app.evaluate()
def _evaluate(msg: Message, context: Context):
    pid = int(context.node_config["partition-id"])
    ds, ix = _data(), _part(pid)
    m = Net()
    m.load_state_dict(msg.content["arrays"].to_torch_state_dict())
    acc = _accuracy(m, ds.train_x[ix], ds.train_y[ix])
    return Message(content=RecordDict({"metrics": MetricRecord({"eval_acc": acc, "num-examples": len(ix)})}),
                   reply_to=msg)


def _global_evaluate(server_round: int, arrays: ArrayRecord) -> MetricRecord:
    ds = _data()
    m = Net()
    m.load_state_dict(arrays.to_torch_state_dict())
    return MetricRecord({"accuracy": _accuracy(m, ds.test_x, ds.test_y), "loss": 0.0})


@pytest.fixture(scope="module")
def flower_run(tmp_path_factory):
    """The quickstart's shape simulated once, with the lines docs/flower.md adds: (run, store, tmp)."""
    import collapse_lab as cl
    from collapse_lab.flower import record
    from flwr.simulation import run_simulation

    tmp = tmp_path_factory.mktemp("flower")
    store = tmp / "ck"
    server_app = ServerApp()

    @server_app.main()
    def _main(grid: Grid, context: Context):
        global_model = Net()
        strategy = FedAvg(fraction_evaluate=1.0, min_train_nodes=CLIENTS, min_available_nodes=CLIENTS)
        strategy = record(strategy, store, {"dataset": "digits", "model": "quickstart-net",  # + these lines
                                            "rounds": ROUNDS, "partition": "natural", "lr": LR, "momentum": 0.9,
                                            "local_epochs": EPOCHS, "batch_size": BATCH, "weight_decay": 0.0},
                          normalize="0.5/0.5", source={"framework": f"flower {flwr.__version__}"})
        strategy.start(grid=grid, initial_arrays=ArrayRecord(global_model.state_dict()), num_rounds=ROUNDS,
                       train_config=ConfigRecord({"lr": LR}), evaluate_fn=_global_evaluate)

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAY_DEDUP_LOGS", "0")
        run_simulation(server_app=server_app, client_app=client_app, num_supernodes=CLIENTS,
                       backend_config={"client_resources": {"num_cpus": 1}, "init_args": {"num_cpus": 2}})
    (run,) = cl.open_store(store)
    return run, store, tmp


@pytest.mark.slow
def test_a_flower_run_is_recorded_with_what_flower_ran(flower_run):
    run, _, _ = flower_run
    assert run.status == "complete" and run.rounds == [0, 1, 2] and run.clients(2) == list(range(CLIENTS))
    meta = run.meta
    # what Flower ran, not collapse-lab's defaults; the sizes and label counts from the replies
    assert (meta["lr"], meta["local_epochs"], meta["batch_size"], meta["preset"], meta["probe"]) == \
        (LR, EPOCHS, BATCH, "external", 0)
    # the clients Flower ran (its grid's SuperNodes; none declared), and what the app never set: unknown
    assert meta["clients"] == CLIENTS
    for k in ("seed", "beta", "classes_per_client", "augment", "eval_batch_size"):
        assert meta[k] is None, (k, meta[k])
    ds = _data()
    parts = [_part(k) for k in range(CLIENTS)]
    assert meta["client_sizes"] == [len(p) for p in parts]
    assert meta["client_label_counts"] == [np.bincount(ds.train_y.numpy()[p], minlength=10).tolist() for p in parts]


@pytest.mark.slow
def test_a_flower_runs_rounds_are_its_evaluations_and_fedavg_of_its_clients(flower_run):
    run, _, _ = flower_run
    ds = _data()
    events = run.metrics()
    assert [e["round"] for e in events] == [0, 1, 2]
    m0 = Net()  # round 0: Flower's evaluation of the initial model, as evaluate_fn returned it
    m0.load_state_dict(run.state(0))
    assert events[0]["test_acc"] == pytest.approx(_accuracy(m0, ds.test_x, ds.test_y), abs=0)
    assert events[0]["test_acc_from"] == "server evaluate_fn" and "accuracy" in events[0]["server_eval"]
    for e in events[1:]:  # the id is not averaged into the train metrics; Flower's own accuracy is the run's
        assert "partition-id" not in e["train_metrics"] and e["test_acc_from"] == "server evaluate_fn"
        m = Net()
        m.load_state_dict(run.state(e["round"]))
        assert e["test_acc"] == pytest.approx(_accuracy(m, ds.test_x, ds.test_y), abs=0)
        assert 0 <= e["eval_metrics"]["eval_acc"] <= 1
    # the stored global model is FedAvg of the stored clients, weighted by their sizes
    sizes = [len(_part(k)) for k in range(CLIENTS)]
    for name, g in run.state(2).items():
        avg = sum(n * run.state(2, k)[name].double() for k, n in enumerate(sizes)) / sum(sizes)
        assert torch.allclose(g.double(), avg, rtol=0, atol=1e-6), name


@pytest.mark.slow
def test_a_flower_run_is_analysed_on_the_inputs_its_model_saw(flower_run):
    import collapse_lab as cl
    from collapse_lab.cli import cli

    run, store, tmp = flower_run
    ds = _data()
    m = Net()  # the spectrum is of the inputs the model saw: the app's Normalize(0.5, 0.5), in float64
    m.load_state_dict(run.state(2))
    sv, _ = cl.spectrum(cl.features(m, _inputs(ds.test_x, torch.float64)))
    factory = ["--model-factory", "tests.test_flower:Net"]
    res = CliRunner().invoke(cli, ["spectrum", "--store", str(store), "--out", str(tmp / "fig"), "--json", *factory])
    assert res.exit_code == 0, res.output
    glob = next(e for e in json.loads(res.stdout)["spectra"] if e["model"] == "global")
    assert glob["singular_values"] == sv[:100].tolist() and glob["n_significant"] == cl.n_significant(sv)
    # collapse-lab's digits normalisation gives another spectrum: the recorded one is not decoration
    other = cl.spectrum(cl.features(m, ds.to_float(ds.test_x, torch.float64)))[0]
    assert not torch.allclose(other, sv)
    res = CliRunner().invoke(cli, ["runs", "--store", str(store), "--json"])
    assert json.loads(res.stdout)[0]["acc"] == run.metrics()[-1]["test_acc"]
    for cmd in (["compare", "--store", str(store), "--out", str(tmp / "fig"), *factory],
                ["cka", "--store", str(store), "--out", str(tmp / "fig"), *factory],
                ["report", "--store", str(store), "--html", str(tmp / "r.html"), *factory]):
        res = CliRunner().invoke(cli, cmd)
        assert res.exit_code == 0, (cmd, res.output)


def test_a_declared_client_count_that_is_not_the_grids_is_refused(tmp_path):
    """A RunWriter that declares 10 clients where Flower's grid has 2 SuperNodes is one line,
    before round 1 is written; record(strategy, STORE, config) takes the grid's count."""
    import collapse_lab as cl
    from collapse_lab.errors import CollapseLabError
    from collapse_lab.flower import _Later, _Recorder

    class TwoNodes:
        def get_node_ids(self):
            return [11, 12]

    w = cl.RunWriter(tmp_path / "a", {"dataset": "digits", "model": "quickstart-net", "clients": 10, "rounds": 1})
    rec = _Recorder(w, None, "metrics", "partition-id", "accuracy")
    rec.grid = TwoNodes()
    with pytest.raises(CollapseLabError, match="clients 10, Flower's grid has 2 SuperNode"):
        rec.open([0, 1])
    rec = _Recorder(_Later(tmp_path / "b", {"dataset": "digits", "model": "quickstart-net", "rounds": 1}, {}), None,
                    "metrics", "partition-id", "accuracy")
    rec.grid = TwoNodes()
    rec.open([0])
    assert rec.writer.config.clients == 2 and rec.writer.run.meta["clients"] == 2
