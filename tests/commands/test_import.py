"""``collapse-lab import``: checkpoints written the way the released FedDecorr code writes
them (torch.save of the global and client-0 state dicts, overwritten every save interval)
become a run the analyses read; a pickle that needs code is refused without running it."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner

import collapse_lab as cl
from collapse_lab.cli import cli
from collapse_lab.data import load_dataset
from tests.test_api import TinyResNet, _trained_tiny
from tests.test_layerwise import _hand

FACTORY = "tests.test_api:tiny_factory"


class Evil:
    def __reduce__(self):  # what an untrusted pickle does: run code when loaded
        return (print, ("this must never run",))


def _released_layout(root, rounds=(100,)):
    """<ckptdir>/fedavg/globalmodel_<log>.pth and localmodel0_<log>.pth, as approach/fedavg.py saves."""
    d = root / "ckpt" / "fedavg"
    d.mkdir(parents=True)
    g, c = _trained_tiny(1), _trained_tiny(2)
    torch.save(g.state_dict(), d / "globalmodel_experiment_log-2026.pth")
    torch.save(c.state_dict(), d / "localmodel0_experiment_log-2026.pth")
    return root / "ckpt", g, c


def test_import_from_python_is_the_commands_import(tmp_path):
    """cl.import_run returns what `import --json` prints and writes the same run."""
    src, g, c = _released_layout(tmp_path)
    args = dict(round_=100, dataset="digits", model="tinyresnet", clients=10, alpha="0.05", settings=["lr=0.01"])
    got = cl.import_run(src, tmp_path / "py", "fedavg/globalmodel_*.pth", "fedavg/localmodel{client}_*.pth", **args)
    res = CliRunner().invoke(cli, ["import", str(src), "--store", str(tmp_path / "cli"), "--global-files",
                                   "fedavg/globalmodel_*.pth", "--client-files", "fedavg/localmodel{client}_*.pth",
                                   "--round", "100", "--dataset", "digits", "--model", "tinyresnet", "--clients", "10",
                                   "--alpha", "0.05", "--set", "lr=0.01", "--json"])
    assert res.exit_code == 0, res.output
    want = json.loads(res.stdout)
    assert {k: v for k, v in got.items() if k not in ("run", "clients")} == \
        {k: v for k, v in want.items() if k not in ("run", "clients")}
    assert got["clients"] == {100: [0]} and want["clients"] == {"100": [0]}  # JSON's keys are text
    py, cl_run = cl.open_run(got["run"]), cl.open_run(want["run"])
    assert py.name == cl_run.name and py.meta["lr"] == 0.01 and py.meta["alpha"] == "0.05"
    want_state = g.state_dict()
    for run in (py, cl_run):
        state = run.state(100)
        assert state.keys() == want_state.keys() and all(torch.equal(state[k], want_state[k]) for k in state)


@pytest.mark.slow
def test_released_feddecorr_checkpoints_import_and_analyse(tmp_path):
    src, g, c = _released_layout(tmp_path)
    store = tmp_path / "store"
    res = CliRunner().invoke(cli, ["import", str(src), "--store", str(store), "--global-files", "fedavg/globalmodel_*.pth",
                                   "--client-files", "fedavg/localmodel{client}_*.pth", "--round", "100",
                                   "--dataset", "digits", "--model", "tinyresnet", "--clients", "10",
                                   "--alpha", "0.05", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    run = cl.open_run(out["run"])
    assert run.rounds == [100] and run.clients(100) == [0] and run.meta["alpha"] == "0.05"
    assert run.meta["source"]["imported_from"] == str(src.resolve()) and run.status == "complete"
    ds = load_dataset("digits")
    x = ds.to_float(ds.test_x, torch.float64)
    assert torch.equal(run.features(model_factory=FACTORY), cl.features(g, x))
    assert torch.equal(run.features(client=0, model_factory=FACTORY), cl.features(c, x))
    res = CliRunner().invoke(cli, ["spectrum", "--store", str(store), "--model-factory", FACTORY, "--json",
                                   "--out", str(tmp_path / "fig")])
    assert res.exit_code == 0, res.output
    models = {e["model"] for e in json.loads(res.stdout)["spectra"]}
    assert models == {"global", "client_0"}
    res = CliRunner().invoke(cli, ["compare", "--store", str(store), "--model-factory", FACTORY,
                                   "--out", str(tmp_path / "fig")])
    assert res.exit_code == 0, res.output
    # per-layer spectra of the foreign model (issue 50): any module by name, equal to this test's own hooks
    res = CliRunner().invoke(cli, ["layers", "--store", str(store), "--model-factory", FACTORY, "--json", "--layer",
                                   "bn1", "--layer", "conv2", "--layer", "z", "--out", str(tmp_path / "fig")])
    assert res.exit_code == 0, res.output
    rows = [e for e in json.loads(res.stdout)["layers"] if e["model"] == "global"]
    assert [e["layer"] for e in rows] == ["bn1", "conv2", "z"] and [e["width"] for e in rows] == [6, 6, 6]
    ref = _hand(g, x, ["bn1", "conv2", "z"])
    for e in rows:
        q = ref[e["layer"]][ref[e["layer"]] > 1e-12 * ref[e["layer"]][0]]
        q = q / q.sum()
        assert abs(e["effective_rank"] - float(np.exp(-(q * np.log(q)).sum()))) < 1e-7 * e["effective_rank"], e


def test_per_round_checkpoints_keep_their_round_numbers(tmp_path):
    src = tmp_path / "src"
    for r in (1, 2, 3):
        (src / f"round_{r}").mkdir(parents=True)
        torch.save({"state_dict": _trained_tiny(r).state_dict(), "epoch": r}, src / f"round_{r}" / "global.pt")
    res = CliRunner().invoke(cli, ["import", str(src), "--store", str(tmp_path / "s"), "--global-files",
                                   "round_{round}/global.pt", "--dataset", "digits"])
    assert res.exit_code == 0, res.output
    (run,) = cl.open_store(tmp_path / "s")
    assert run.rounds == [1, 2, 3]
    assert all(torch.equal(run.state(2)[k], _trained_tiny(2).state_dict()[k]) for k in run.state(2))
    # an analysis says the clients' models were not imported, not a --keep-local the run never had
    res = CliRunner().invoke(cli, ["spectrum", "--store", str(tmp_path / "s"), "--model-factory", FACTORY,
                                   "--out", str(tmp_path / "f")])
    assert res.exit_code == 0, res.output
    assert "was imported without its clients' models (import --client-files); global model only" in res.stderr
    assert "--keep-local" not in res.stderr


def test_code_in_a_pickle_is_refused_and_nothing_is_written(tmp_path, capfd):
    src = tmp_path / "src"
    src.mkdir()
    torch.save({"weights": TinyResNet().state_dict(), "hook": Evil()}, src / "global.pt")
    res = CliRunner().invoke(cli, ["import", str(src), "--store", str(tmp_path / "s"), "--global-files", "global.pt",
                                   "--dataset", "digits"])
    assert res.exit_code == 2 and "not a checkpoint of tensors that loads without running code" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and not (tmp_path / "s").exists()
    assert "this must never run" not in capfd.readouterr().out
    for args, msg in ((["--global-files", "nothing_*.pt"], "no file under"), (["--global-files", "global.pt", "--key", "x"],
                                                                           "not a checkpoint")):
        res = CliRunner().invoke(cli, ["import", str(src), "--store", str(tmp_path / "s"), "--dataset", "digits",
                                       *args])
        assert res.exit_code == 2 and msg in res.stderr


def test_a_client_pattern_that_matches_nothing_is_one_line_and_no_store_is_made(tmp_path):
    """--client-files given and matching no file: refused (the run would silently have no local
    models), exit 2, no store and no .locks/ left; a --global-files that matches nothing likewise."""
    src = tmp_path / "src"
    (src / "round_1").mkdir(parents=True)
    torch.save(TinyResNet().state_dict(), src / "round_1" / "global.pt")
    ok = ["--global-files", "round_{round}/global.pt"]
    for args, msg in (([*ok, "--client-files", "round_{round}/c_{client}.pt"], "--client-files round_{round}/c_{client}.pt: no file"),
                      (["--global-files", "nothing_{round}.pt"], "--global-files nothing_{round}.pt: no file")):
        store = tmp_path / f"s{len(msg)}"
        res = CliRunner().invoke(cli, ["import", str(src), "--store", str(store), "--dataset", "digits", *args])
        assert res.exit_code == 2 and msg in res.stderr, res.output
        assert len(res.stderr.strip().splitlines()) == 1 and not store.exists()
