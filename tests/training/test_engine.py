"""End-to-end training on the gaussian data set: store layout, FedAvg of stored clients, determinism."""
from __future__ import annotations

import json
import re

import pytest
import torch
from click.testing import CliRunner

from collapse_lab.methods.aggregate import weighted_average
from collapse_lab.store import find_runs
from tests.fixtures import invoke as run_cli
from tests.fixtures import tiny_train_args

FAST = tiny_train_args()




def test_train_store_layout_and_fedavg_of_clients(tmp_path):
    res = run_cli("train", *FAST, "--rounds", "2", "--clients", "4", "--alpha", "0.3", "--alpha", "inf",
                  "--reg", "feddecorr", "--store", str(tmp_path), "--json")
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert len(summary["runs"]) == 2 and all(r["status"] == "complete" for r in summary["runs"])
    runs = find_runs(tmp_path)
    names = sorted(r.path.name for r in runs)
    assert [n[:-9] for n in names] == ["gaussian_mlp_fedavg_feddecorr0.1_dir0.3_K4_s0",
                                       "gaussian_mlp_fedavg_feddecorr0.1_dirinf_K4_s0"]
    assert all(re.fullmatch(r"[0-9a-f]{8}", n[-8:]) and n[-9] == "_" for n in names)
    for run in runs:
        meta = run.meta
        for key in ("dataset", "model", "method", "reg", "beta", "partition", "alpha", "clients", "rounds", "seed",
                    "status", "partition_hash", "versions"):
            assert key in meta, key
        assert meta["status"] == "complete" and meta["rounds_complete"] == 2
        assert run.partition().content_hash() == meta["partition_hash"]
        sizes = run.partition().sizes
        for r in (1, 2):
            clients = [run.load_client(r, k) for k in range(4)]
            # the stored global model is the sample-weighted average of the stored clients
            avg = weighted_average(clients, sizes.tolist())
            g = run.load_global(r)
            for key in g:
                assert torch.allclose(g[key], avg[key], atol=1e-7), key
        events = run.metrics()
        rounds = [e for e in events if e["event"] == "round"]
        local = [e for e in events if e["event"] == "local_epoch"]
        assert [e["round"] for e in rounds] == [0, 1, 2]
        assert len(local) == 2 * 4 * 2  # rounds x clients x epochs
        assert all(e["reg"] > 0 and abs(e["loss"] - (e["ce"] + 0.1 * e["reg"])) < 1e-9 for e in local)
        assert 0 <= rounds[-1]["test_acc"] <= 1


def test_same_seed_bit_identical_and_partial_participation(tmp_path):
    outs = []
    for name in ("a", "b"):
        res = run_cli("train", *FAST, "--rounds", "2", "--clients", "6", "--alpha", "0.5", "--sample-fraction", "0.5",
                      "--store", str(tmp_path / name))
        assert res.exit_code == 0, res.output
        outs.append(find_runs(tmp_path / name)[0])
    a, b = outs
    # identical weights give identical files, byte for byte
    assert (a.global_path(2)).read_bytes() == (b.global_path(2)).read_bytes()
    for r in (1, 2):
        files = sorted(p.name for p in a.round_dir(r).glob("client_*.safetensors"))
        assert len(files) == 3  # half of 6 clients
        ids = [int(f.split("_")[1].split(".")[0]) for f in files]
        sizes = a.partition().sizes
        avg = weighted_average([a.load_client(r, k) for k in ids], [int(sizes[k]) for k in ids])
        assert all(torch.allclose(a.load_global(r)[k], avg[k], atol=1e-7) for k in avg)
    # the sampling schedule is reproducible from the seed
    sampled = [sorted(int(p.name.split("_")[1].split(".")[0]) for p in a.round_dir(r).glob("client_*")) for r in (1, 2)]
    assert sampled == [sorted(int(p.name.split("_")[1].split(".")[0]) for p in b.round_dir(r).glob("client_*")) for r in (1, 2)]


def test_existing_complete_run_is_skipped_and_conflict_is_an_error(tmp_path):
    args = ["train", *FAST, "--rounds", "1", "--clients", "3", "--alpha", "1", "--store", str(tmp_path)]
    assert run_cli(*args).exit_code == 0
    (first,) = [p for p in tmp_path.iterdir() if not p.name.startswith('.')]
    before = first.joinpath("round_1", "global.safetensors").read_bytes()
    res = run_cli(*args)
    assert res.exit_code == 0 and "already complete" in res.stderr
    # a folder whose run.json holds another configuration under this name is refused
    meta = json.loads((first / "run.json").read_text())
    (first / "run.json").write_text(json.dumps({**meta, "lr": 0.5}))
    res = run_cli(*args)
    assert res.exit_code == 2 and "different configuration (differs in: lr)" in res.stderr
    (first / "run.json").write_text(json.dumps(meta))
    assert first.joinpath("round_1", "global.safetensors").read_bytes() == before


def test_runs_that_train_differently_get_folders_of_their_own(tmp_path):
    """Every option that changes training changes the folder name (no --tag needed), the
    same configuration always gets the same name, and a store written before the hash
    existed (legacy names) is still found: its complete runs are skipped."""
    args = ["train", *FAST, "--rounds", "1", "--clients", "3", "--alpha", "1", "--reg", "feddecorr",
            "--store", str(tmp_path)]
    for extra in ([], ["--decorr-norm", "paper"], ["--lr", "0.5"], ["--reg-option", "dummy=1"]):
        res = run_cli(*args, *extra)
        if extra and extra[0] == "--reg-option":
            assert res.exit_code == 2 and "has no option dummy" in res.stderr
        else:
            assert res.exit_code == 0, res.output
    names = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith('.'))
    assert len(names) == 3 and len({n[:-9] for n in names}) == 1  # one readable part, three hashes
    legacy = tmp_path / "gaussian_mlp_fedavg_feddecorr0.1_dir1_K3_s0"
    plain = [p for p in tmp_path.iterdir() if not p.name.startswith('.') and json.loads((p / "run.json").read_text())["reg_options"]["normalization"] == "paper"
             and json.loads((p / "run.json").read_text())["lr"] != 0.5]
    plain[0].rename(legacy)
    res = run_cli(*args, "--decorr-norm", "paper")
    assert res.exit_code == 0 and f"{legacy}: already complete" in res.stderr
    assert len([p for p in tmp_path.iterdir() if not p.name.startswith('.')]) == 3


@pytest.mark.parametrize("fmt", ["toml", "yaml"])
def test_config_file_and_flag_override(tmp_path, fmt):
    cfg = tmp_path / f"c.{fmt}"
    if fmt == "toml":
        cfg.write_text('dataset = "gaussian"\nrounds = 1\nclients = 3\nalpha = 2.0\nlr = 0.2\nlocal-epochs = 1\n'
                       '[dataset_options]\ndim = 4\ntrain_per_class = 20\n')
    else:
        cfg.write_text("dataset: gaussian\nrounds: 1\nclients: 3\nalpha: 2.0\nlr: 0.2\nlocal_epochs: 1\n"
                       "dataset_options: {dim: 4, train_per_class: 20}\n")
    res = run_cli("train", "--config", str(cfg), "--lr", "0.3", "--store", str(tmp_path / "o"), "--json")
    assert res.exit_code == 0, res.output
    meta = find_runs(tmp_path / "o")[0].meta
    assert meta["lr"] == 0.3 and meta["rounds"] == 1 and meta["alpha"] == "2" and meta["dataset_options"]["dim"] == 4


@pytest.mark.parametrize("args,msg", [
    (["--alpha", "0"], "--alpha must be > 0"),
    (["--alpha", "-0.5"], "--alpha must be > 0"),
    (["--model", "vgg"], "unknown model 'vgg'"),
    (["--dataset", "imagenet"], "unknown data set 'imagenet'"),
    (["--dataset", "mnist", "--data-root", "."], "MNIST train files not found"),
    (["--clients", "100000"], "more than the"),
    (["--reg", "l2"], "unknown regularizer"),
])
def test_bad_input_exit_2_one_line_nothing_written(tmp_path, args, msg):
    res = run_cli("train", "--store", str(tmp_path / "o"), "--rounds", "1", *args)
    assert res.exit_code == 2
    assert msg in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert "Traceback" not in res.output
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


def test_a_client_without_samples_keeps_the_global_model(tmp_path, cifar_root):
    """A split with --min-size 0 can leave a client empty: it takes no step (it was given one
    empty batch, whose NaN loss marked the run diverged) and returns the global model."""
    from collapse_lab.cli import cli
    from collapse_lab.tensor_files import load_tensors
    from collapse_lab.store import find_runs

    res = CliRunner().invoke(cli, ["train", "--dataset", "cifar10", "--data-root", str(cifar_root), "--model", "cnn",
                                   "--augment", "none", "--alpha", "0.01", "--min-size", "0", "--clients", "20",
                                   "--rounds", "1", "--local-epochs", "1", "--store", str(tmp_path)])
    assert res.exit_code == 0, res.output
    (run,) = find_runs(tmp_path)
    sizes = run.meta["client_sizes"]
    assert run.meta["status"] == "complete" and 0 in sizes
    k = sizes.index(0)
    g0, local = load_tensors(run.global_path(0)), load_tensors(run.client_path(1, k))
    assert all(torch.equal(g0[n], local[n]) for n in g0)
    ev = [e for e in run.metrics() if e.get("event") == "local_epoch" and e["client"] == k]
    assert ev[0]["samples"] == 0 and ev[0]["steps"] == 0 and ev[0]["loss"] == 0


def test_the_divergence_check_names_the_first_non_finite_tensor_as_a_check_per_tensor_would():
    """``stops.non_finite`` checks all tensors at once; its answer must be the one a check of
    each tensor in order gives, whatever the dtypes: a float64 1e300 is finite (it would not
    be in float32), integer tensors are never checked, bf16 is checked in bf16."""
    from collapse_lab.training.stops import non_finite

    def reference(state):
        return next((n for n, v in state.items() if v.is_floating_point() and not torch.isfinite(v).all()), None)

    big = torch.tensor([1e300], dtype=torch.float64)
    cases = [
        {},
        {"w": torch.ones(3), "big": big, "steps": torch.arange(4)},
        {"w": torch.ones(3), "b": torch.tensor([1.0, float("nan")]), "c": torch.tensor([float("inf")], dtype=torch.float64)},
        {"w": torch.ones(3), "h": torch.tensor([float("-inf")], dtype=torch.bfloat16), "b": torch.tensor([float("nan")])},
        {"big": big, "w": torch.full((2, 2), 3.0e38) * 10},
    ]
    answers = [non_finite(s) for s in cases]
    assert answers == [reference(s) for s in cases] == [None, None, "b", "h", "w"]
