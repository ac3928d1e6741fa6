"""``collapse-lab import`` of the released FedDecorr code's checkpoints in one command: its
ResNet's parameter names (``layer1.0.``) under ``--model resnet20``, a round 0 initial model,
symbolic links inside the source, the method and regularizer it is told, a strict load
(nothing written otherwise); then the analyses with only ``--data-root``, on the inputs the
run records. And the analysis options that would have no effect."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

import collapse_lab as cl
from collapse_lab.cli import cli
from collapse_lab.models import build_model

RELEASED = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "released-checkpoints" / "fedavg_s0"
NORM = "0.4914,0.4822,0.4465/0.247,0.2435,0.2616"


def _released_names(state: dict) -> dict:
    """Our ResNet-20's names -> the released code's (networks/resnetcifar.py: three stages
    ``layer1..3`` of three blocks), written out independently of collapse-lab's mapping."""
    out = {}
    for k, v in state.items():
        m = re.match(r"layers\.(\d+)\.(.*)", k)
        out[f"layer{int(m.group(1)) // 3 + 1}.{int(m.group(1)) % 3}.{m.group(2)}" if m else k] = v
    return out


def _nets(n: int = 3) -> list[torch.nn.Module]:
    out = []
    for i in range(n):
        torch.manual_seed(i)
        out.append(build_model("resnet20", 10, (3, 32, 32)))
    return out


def _source(tmp_path: Path) -> tuple[Path, list]:
    """round_0/global.pt, round_1/{global,client_0}.pt, and round_2 as a symbolic link to a
    folder elsewhere, each a torch.save of a state dict under the released names."""
    nets = _nets()
    src, elsewhere = tmp_path / "src", tmp_path / "elsewhere" / "r2"
    for r, folder in ((0, src / "round_0"), (1, src / "round_1"), (2, elsewhere)):
        folder.mkdir(parents=True)
        torch.save(_released_names(nets[r].state_dict()), folder / "global.pt")
        if r:
            torch.save(_released_names(nets[0].state_dict()), folder / "client_0.pt")
    (src / "round_2").symlink_to(elsewhere, target_is_directory=True)
    return src, nets


def _import(src, store, *extra, clients="10"):
    return CliRunner().invoke(cli, ["import", str(src), "--store", str(store), "--global-files", "round_{round}/global.pt",
                                    "--client-files", "round_{round}/client_{client}.pt", "--dataset", "cifar10",
                                    "--model", "resnet20", "--clients", clients, "--alpha", "0.05", *extra])


@pytest.mark.slow
def test_released_names_round_zero_and_symlinks_import_as_resnet20_and_analyse(tmp_path, cifar_root):
    src, nets = _source(tmp_path)
    store = tmp_path / "store"
    res = _import(src, store, "--reg", "feddecorr", "--beta", "0.1", "--normalize", NORM, "--set", "lr=0.01",
                  "--set", "local_epochs=1", "--json")
    assert res.exit_code == 0, res.output
    run = cl.open_run(json.loads(res.stdout)["run"])
    assert run.rounds == [0, 1, 2] and run.clients(1) == [0] and run.clients(2) == [0] and run.status == "complete"
    m = run.meta
    assert (m["model"], m["model_revision"], m["reg"], m["beta"], m["method"], m["normalize"], m["lr"]) == \
        ("resnet20", 2, "feddecorr", 0.1, "fedavg", NORM, 0.01)
    assert m["weight_decay"] is None and m["data_root"] is None
    for r in (0, 1, 2):
        assert all(torch.equal(run.state(r)[k], v) for k, v in nets[r].state_dict().items())
    # the spectrum with only --data-root: the model's own inputs, equal to cl.features on them
    res = CliRunner().invoke(cli, ["spectrum", "--store", str(store), "--data-root", str(cifar_root), "--json",
                                   "--out", str(tmp_path / "fig")])
    assert res.exit_code == 0, res.output
    from collapse_lab.data import load_dataset

    ds = load_dataset("cifar10", data_root=cifar_root)
    mean = torch.tensor([0.4914, 0.4822, 0.4465], dtype=torch.float64).view(1, 3, 1, 1)
    std = torch.tensor([0.247, 0.2435, 0.2616], dtype=torch.float64).view(1, 3, 1, 1)
    z = cl.features(nets[2], (ds.test_x.double() / 255 - mean) / std)
    glob = next(e for e in json.loads(res.stdout)["spectra"] if e["model"] == "global")
    assert glob["singular_values"] == cl.spectrum(z)[0][:100].tolist()


def test_a_state_that_does_not_load_strictly_is_refused_and_nothing_written(tmp_path):
    src, _ = _source(tmp_path)
    bad = torch.load(src / "round_1" / "global.pt", weights_only=True)
    bad.pop("layer2.1.bn1.weight")
    bad["projection.weight"] = torch.zeros(3)
    torch.save(bad, src / "round_1" / "global.pt")
    res = _import(src, tmp_path / "store")
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1, res.output
    assert "1 missing: layers.4.bn1.weight" in res.stderr and "1 unexpected: projection.weight" in res.stderr
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("content", [b"not a checkpoint at all\n", b"PK\x03\x04" + b"\x00" * 60])
def test_a_file_that_is_no_checkpoint_is_one_line(tmp_path, content):
    src = tmp_path / "src" / "round_1"
    src.mkdir(parents=True)
    (src / "global.pt").write_bytes(content)
    (src / "client_0.pt").write_bytes(content)  # a --client-files pattern that matches nothing is its own error
    res = _import(tmp_path / "src", tmp_path / "store")
    assert res.exit_code == 2 and "not a checkpoint" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "store").exists()


def test_a_client_beyond_the_clients_given_and_a_lone_round_zero_are_refused(tmp_path):
    src, _ = _source(tmp_path)
    res = _import(src, tmp_path / "store", clients="1")
    assert res.exit_code == 0, res.output  # client 0 of 1: fine
    (src / "round_1" / "client_0.pt").rename(src / "round_1" / "client_4.pt")
    res = _import(src, tmp_path / "s2", clients="3")
    assert res.exit_code == 2 and "client 4 was found" in res.stderr and not (tmp_path / "s2").exists()
    res = CliRunner().invoke(cli, ["import", str(src), "--store", str(tmp_path / "s3"), "--global-files",
                                   "round_0/global.pt", "--round", "0", "--dataset", "cifar10", "--model", "resnet20"])
    assert res.exit_code == 2 and "only the initial model" in res.stderr and not (tmp_path / "s3").exists()


@pytest.mark.skipif(not RELEASED.is_dir(), reason="the released code's checkpoints (../shared) are not here")
def test_the_released_codes_own_checkpoints_import(tmp_path):
    store = tmp_path / "store"
    res = CliRunner().invoke(cli, ["import", str(RELEASED), "--store", str(store), "--global-files",
                                   "round_{round}/global.pt", "--client-files", "round_{round}/client_{client}.pt",
                                   "--dataset", "cifar10", "--model", "resnet20", "--clients", "10", "--json"])
    assert res.exit_code == 0, res.output
    run = cl.open_run(json.loads(res.stdout)["run"])
    assert run.rounds == [0, 1] and run.meta["model_revision"] == 2
    want = torch.load(RELEASED / "round_1" / "global.pt", weights_only=True)
    m = build_model("resnet20", 10, (3, 32, 32))
    m.load_state_dict(run.state(1))  # strictly: every name of ours is there
    assert sorted(v.sum().item() for v in run.state(1).values()) == sorted(v.sum().item() for v in want.values())
    res = CliRunner().invoke(cli, ["import", str(RELEASED / "released-own"), "--store", str(store), "--global-files",
                                   "globalmodel_*.pth", "--client-files", "localmodel{client}_*.pth", "--round", "5",
                                   "--dataset", "cifar10", "--model", "resnet20", "--clients", "10", "--tag", "own"])
    assert res.exit_code == 0, res.output


@pytest.mark.slow
def test_data_root_for_a_run_that_records_none(tmp_path, cifar_root, monkeypatch):
    w = cl.RunWriter(tmp_path / "ck", {"dataset": "cifar10", "model": "resnet20", "clients": 2, "rounds": 1},
                     normalize="dataset")
    w.write_round(1, _nets(1)[0].state_dict())
    w.close()
    args = ["spectrum", "--store", str(tmp_path / "ck"), "--out", str(tmp_path / "fig")]
    monkeypatch.delenv("COLLAPSE_LAB_DATA", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "nocfg"))
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2 and "--data-root" in res.stderr and "records no data root" in res.stderr
    assert CliRunner().invoke(cli, [*args, "--data-root", str(cifar_root)]).exit_code == 0
    monkeypatch.setenv("COLLAPSE_LAB_DATA", str(cifar_root))
    assert CliRunner().invoke(cli, args).exit_code == 0
    monkeypatch.setenv("COLLAPSE_LAB_DATA", str(tmp_path))
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2 and "$COLLAPSE_LAB_DATA" in res.stderr and "--data-root (" not in res.stderr
    # import records the --data-root it is given (and nothing when it is given none)
    src, _ = _source(tmp_path)
    for extra, want in ((["--data-root", str(cifar_root)], str(cifar_root)), ([], None)):
        res = _import(src, tmp_path / "imp", "--json", "--tag", f"t{len(extra)}", *extra)
        assert res.exit_code == 0 and cl.open_run(json.loads(res.stdout)["run"]).meta["data_root"] == want


def test_analysis_options_without_effect_are_refused(tmp_path, monkeypatch):
    w = cl.RunWriter(tmp_path / "ck", {"dataset": "digits", "model": "mlp", "clients": 2, "rounds": 1},
                     normalize="dataset")
    torch.manual_seed(0)
    w.write_round(1, build_model("mlp", 10, (1, 8, 8)).state_dict())
    w.close()
    store = ["--store", str(tmp_path / "ck"), "--out", str(tmp_path / "fig")]
    for cmd, msg in ((["spectrum", "--layer", ""], "--layer is empty"), (["cka", "--client", "1"], "--client has no")):
        res = CliRunner().invoke(cli, [*cmd, *store])
        assert res.exit_code == 2 and msg in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.output
    with pytest.raises(cl.CollapseLabError, match="did you mean alpha"):
        cl.open_store(tmp_path / "ck", alhpa=0.5)
    # a factory module found from the working directory (a Flower app's folder), and one that exits on import
    app = tmp_path / "app" / "myapp"
    app.mkdir(parents=True)
    (app / "__init__.py").write_text("")
    (app / "task.py").write_text("from collapse_lab.models import build_model\n"
                                 "def Net():\n    return build_model('mlp', 10, (1, 8, 8))\n")
    (app / "exits.py").write_text("import sys\nsys.exit(3)\n")
    monkeypatch.chdir(tmp_path / "app")
    res = CliRunner().invoke(cli, ["spectrum", *store, "--model-factory", "myapp.task:Net"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(cli, ["spectrum", *store, "--model-factory", "myapp.exits:f"])
    assert res.exit_code == 2 and "exited with status 3" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def net_with_inputs():
    """A factory that says what inputs its model was trained on (data.normalize)."""
    torch.manual_seed(0)
    return build_model("mlp", 10, (1, 8, 8)), "0.5/0.25"


def test_a_factory_may_say_the_normalisation_a_run_does_not(tmp_path, capfd):
    from collapse_lab.data import load_dataset

    torch.manual_seed(0)
    net = build_model("mlp", 10, (1, 8, 8))
    w = cl.RunWriter(tmp_path / "ck", {"dataset": "digits", "model": "mine", "clients": 2, "rounds": 1})
    w.write_round(1, net.state_dict())
    run = cl.open_run(w.close())
    assert run.meta["normalize"] == "unknown"
    ds = load_dataset("digits")
    z = run.features(model_factory="tests.commands.test_import_released:net_with_inputs")
    assert torch.equal(z, cl.features(net, (ds.test_x.double() / 16 - 0.5) / 0.25))
    assert "without their input normalisation" not in capfd.readouterr().err
    # a factory that says nothing: collapse-lab's constants, and one warning
    z2 = run.features(model_factory="tests.commands.test_import_released:_plain_mlp")
    assert torch.equal(z2, cl.features(net, ds.to_float(ds.test_x, torch.float64)))
    assert capfd.readouterr().err.count("without their input normalisation") == 1


def _plain_mlp():
    torch.manual_seed(0)
    return build_model("mlp", 10, (1, 8, 8))
