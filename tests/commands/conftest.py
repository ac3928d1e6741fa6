from __future__ import annotations

import pytest
from click.testing import CliRunner

from collapse_lab.cli import cli

GAUSS = ["--dataset", "gaussian", "--dataset-option", "dim=12", "--dataset-option", "train_per_class=40",
         "--dataset-option", "test_per_class=20", "--local-epochs", "2", "--batch-size", "16", "--clients", "4",
         "--rounds", "3"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A small run store: alphas 0.1 and inf without regularizer, 0.1 with FedDecorr."""
    out = tmp_path_factory.mktemp("store") / "checkpoints"
    for extra in (["--alpha", "0.1", "--alpha", "inf"], ["--alpha", "0.1", "--reg", "feddecorr"]):
        res = CliRunner().invoke(cli, ["train", *GAUSS, *extra, "--store", str(out)])
        assert res.exit_code == 0, res.output
    return out
