"""A real Flower simulation (three clients, the registry's MLP on digits, in-process on a
local Ray instance) recorded into a store by ``collapse_lab.flower.record``; the analyses
then read it. Skips without the flower extra."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from click.testing import CliRunner

flwr = pytest.importorskip("flwr")

from flwr.app import ArrayRecord, Context, Message, MetricRecord, RecordDict  # noqa: E402
from flwr.clientapp import ClientApp  # noqa: E402
from flwr.serverapp import Grid, ServerApp  # noqa: E402
from flwr.serverapp.strategy import FedAvg  # noqa: E402

CLIENTS, ROUNDS = 3, 2


def _model():
    from collapse_lab.models import build_model

    torch.manual_seed(0)
    return build_model("mlp", 10, (64,))


def _part(pid: int):
    from collapse_lab.data import load_dataset

    ds = load_dataset("digits")
    ix = np.flatnonzero(ds.train_y.numpy() % CLIENTS == pid)  # a label split: client k holds classes = k mod 3
    return ds, ix


client_app = ClientApp()


@client_app.train()
def _train(msg: Message, context: Context):
    pid = int(context.node_config["partition-id"])
    ds, ix = _part(pid)
    m = _model()
    m.load_state_dict(msg.content["arrays"].to_torch_state_dict())
    opt = torch.optim.SGD(m.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(pid)
    for _ in range(5):  # five local steps of 32
        b = torch.from_numpy(ix)[torch.randperm(len(ix), generator=g)[:32]]
        logits, _ = m(ds.to_float(ds.train_x[b]))
        opt.zero_grad()
        F.cross_entropy(logits, ds.train_y[b]).backward()
        opt.step()
    reply = RecordDict({"arrays": ArrayRecord(m.state_dict()),
                        "metrics": MetricRecord({"num-examples": len(ix), "partition-id": pid})})
    return Message(content=reply, reply_to=msg)


@pytest.mark.slow
def test_a_flower_simulation_recorded_into_a_store_is_analysed(tmp_path, monkeypatch):
    import collapse_lab as cl
    from collapse_lab.cli import cli
    from collapse_lab.flower import record
    from flwr.simulation import run_simulation

    store = tmp_path / "ck"
    parts = [_part(k)[1] for k in range(CLIENTS)]
    ds = _part(0)[0]
    server_app = ServerApp()

    @server_app.main()
    def _main(grid: Grid, context: Context):
        writer = cl.RunWriter(store, {"dataset": "digits", "model": "mlp", "clients": CLIENTS, "rounds": ROUNDS,
                                      "partition": "natural"},
                              client_indices=parts, labels=ds.train_y.numpy(), num_classes=10,
                              initial=_model().state_dict(), source={"framework": f"flower {flwr.__version__}"})
        strategy = record(FedAvg(fraction_evaluate=0.0, min_train_nodes=CLIENTS, min_available_nodes=CLIENTS), writer)
        strategy.start(grid=grid, initial_arrays=ArrayRecord(_model().state_dict()), num_rounds=ROUNDS)

    monkeypatch.setenv("RAY_DEDUP_LOGS", "0")
    run_simulation(server_app=server_app, client_app=client_app, num_supernodes=CLIENTS,
                   backend_config={"client_resources": {"num_cpus": 1}, "init_args": {"num_cpus": 2}})
    (run,) = cl.open_store(store)
    assert run.status == "complete" and run.rounds == [0, 1, 2] and run.clients(2) == [0, 1, 2]
    # the stored global model is FedAvg of the stored clients, weighted by their sizes
    sizes = [len(p) for p in parts]
    for name, g in run.state(2).items():
        avg = sum(n * run.state(2, k)[name].double() for k, n in enumerate(sizes)) / sum(sizes)
        assert torch.allclose(g.double(), avg, rtol=0, atol=1e-6), name
    # the spectrum from the store equals the one computed directly from the same parameters
    m = _model()
    m.load_state_dict(run.state(2))
    direct = cl.features(m, ds.to_float(ds.test_x, torch.float64))
    assert torch.equal(run.features(2), direct)
    sv, floor = cl.spectrum(direct)
    res = CliRunner().invoke(cli, ["spectrum", "--store", str(store), "--out", str(tmp_path / "fig"), "--json"])
    assert res.exit_code == 0, res.output
    glob = next(e for e in json.loads(res.stdout)["spectra"] if e["model"] == "global")
    assert glob["singular_values"] == sv[:100].tolist() and glob["n_significant"] == cl.n_significant(sv)
    for cmd in (["compare", "--store", str(store), "--out", str(tmp_path / "fig")],
                ["cka", "--store", str(store), "--out", str(tmp_path / "fig")],
                ["report", "--store", str(store), "--out", str(tmp_path / "r.html")]):
        res = CliRunner().invoke(cli, cmd)
        assert res.exit_code == 0, (cmd, res.output)
