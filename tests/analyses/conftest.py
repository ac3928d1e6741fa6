"""A tiny store shared by the catalogue's tests: gaussian data, 3 clients, 3 rounds, two
alphas x two seeds, trained once per session."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from collapse_lab.cli import cli

TINY = {"dataset": "gaussian", "dataset_options": {"dim": 8, "train_per_class": 30, "test_per_class": 20},
        "clients": 3, "rounds": 3, "local_epochs": 1, "batch_size": 8, "lr": 0.05}


@pytest.fixture(scope="session")
def store(tmp_path_factory):
    st = tmp_path_factory.mktemp("store")
    for a in ("0.1", "inf"):
        res = CliRunner().invoke(cli, ["train", *sum((["--" + k.replace("_", "-"), str(v)] for k, v in TINY.items()
                                                      if k != "dataset_options"), []),
                                       *sum((["--dataset-option", f"{k}={v}"] for k, v in TINY["dataset_options"].items()),
                                            []), "--alpha", a, "--seed", "0", "--seed", "1", "--store", str(st)])
        assert res.exit_code == 0, res.output
    return st


