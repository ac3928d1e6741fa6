"""One path for the analyses: each command's --json is what its function in
``collapse_lab.actions`` returns for the same options (numbers and figures alike), and the
train function trains the bytes the command trains."""
from __future__ import annotations

import json

from click.testing import CliRunner

from collapse_lab.cli import cli

from .conftest import GAUSS


def _cli_json(*args):
    res = CliRunner().invoke(cli, [*map(str, args), "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_each_analysis_returns_what_its_command_prints(store, tmp_path):
    from collapse_lab.actions import layers, report, runs, similarity, spectrum

    quiet = dict(warn=lambda m: None)
    cases = [
        (["spectrum", "--store", store, "--out", tmp_path / "a"],
         spectrum.spectrum(store, out=str(tmp_path / "a"), say=lambda m: None, **quiet), ("seed_groups", "notes")),
        (["spectrum", "--store", store, "--over-rounds", "all", "--out", tmp_path / "b"],
         spectrum.spectrum(store, over_rounds="all", out=str(tmp_path / "b"), **quiet), ("kind",)),
        (["compare", "--store", store, "--alpha", "0.1", "--out", tmp_path / "c"],
         spectrum.compare(store, alpha=["0.1"], out=str(tmp_path / "c"), **quiet), ()),
        (["layers", "--store", store, "--alpha", "0.1", "--out", tmp_path / "d"],
         layers.layers(store, alpha=["0.1"], out=str(tmp_path / "d"), say=lambda m: None, **quiet), ()),
        (["nc", "--store", store, "--out", tmp_path / "e"], similarity.nc(store, out=str(tmp_path / "e"), **quiet), ()),
    ]
    for args, got, extra in cases:
        printed = _cli_json(*args)
        py = json.loads(json.dumps({k: v for k, v in got.items() if k not in ("notes", "kind")}))
        if "computed" in py:  # models read, not from the cache beside the store: the second call reads it
            assert py["computed"] > 0 and printed.pop("computed") == 0
            py.pop("computed")
        assert [k for k in printed if printed[k] != py.get(k)] == [] and printed == py, args
        assert printed and all(k in got for k in extra)
    names = [r["run"] for r in runs.runs(store, where={"alpha": "0.1"})]
    assert len(names) == 2 and names == [r["run"] for r in _cli_json("runs", "--store", store, "--where", "alpha=0.1")]
    page = report.report(store, figures=str(tmp_path / "none"), html=str(tmp_path / "r.html"), say=lambda m: None,
                         **quiet)
    assert page["bytes"] == (tmp_path / "r.html").stat().st_size > 0 and len(page["runs"]) == 3


def test_the_train_function_stores_the_bytes_the_command_stores(tmp_path):
    """fp32 on the CPU is deterministic: the same options through the command and through
    ``actions.train.train`` store byte-equal checkpoints and equal metrics."""
    from collapse_lab.actions.train import train
    from collapse_lab.store import find_runs

    opts = [*GAUSS, "--alpha", "0.1", "--precision", "fp32"]
    res = CliRunner().invoke(cli, ["train", *opts, "--store", str(tmp_path / "cli")])
    assert res.exit_code == 0, res.output
    flags = {"dataset": "gaussian", "dataset_option": ["dim=12", "train_per_class=40", "test_per_class=20"],
             "local_epochs": 2, "batch_size": 16, "clients": 4, "rounds": 3, "alpha": ["0.1"], "precision": "fp32"}
    said = []
    done = train(tmp_path / "py", flags=flags, say=said.append)
    assert done.trained == 1 and done.diverged == [] and done.stopped is None and said[0].startswith("train: 1 run(s)")
    (a,), (b,) = find_runs(tmp_path / "cli"), find_runs(tmp_path / "py")
    assert a.path.name == b.path.name
    files = sorted(p.relative_to(a.path) for p in a.path.rglob("*.safetensors"))
    assert files and files == sorted(p.relative_to(b.path) for p in b.path.rglob("*.safetensors"))
    assert all((a.path / f).read_bytes() == (b.path / f).read_bytes() for f in files)
    strip = lambda rows: [{k: v for k, v in e.items() if "time" not in k and "second" not in k} for e in rows]  # noqa: E731
    assert strip(a.metrics()) == strip(b.metrics())
