"""A run whose creation was killed (SIGKILL between the temporary folder and its rename)
leaves a hidden folder; the next creation of that run, under its lock, removes it, and
leaves alone every other hidden folder of the store."""
from __future__ import annotations

from click.testing import CliRunner

from collapse_lab.cli import cli
from collapse_lab.config import RunConfig
from collapse_lab.runspec.resolve import resolve_runs

ARGS = ["--dataset", "gaussian", "--dataset-option", "dim=6", "--dataset-option", "train_per_class=10",
        "--dataset-option", "test_per_class=5", "--clients", "2", "--rounds", "1", "--local-epochs", "1",
        "--alpha", "0.5", "--probe", "0"]


def test_a_killed_creations_temporary_folder_goes_when_the_run_is_created(tmp_path):
    store = tmp_path / "ck"
    store.mkdir()
    (cfg,) = resolve_runs({"dataset": "gaussian", "dataset_option": ["dim=6", "train_per_class=10", "test_per_class=5"],
                           "clients": 2, "rounds": 1, "local_epochs": 1, "alpha": ["0.5"], "probe": 0})
    assert isinstance(cfg, RunConfig)
    name = cfg.run_name()
    dead = store / f".{name}.k1ll3d_x"  # as tempfile.mkdtemp names it: the prefix and 8 characters
    dead.mkdir()
    (dead / "run.json").write_text("{}")
    others = [store / f".{name}.notmine-long", store / ".other_run.abcdefgh"]
    for o in others:
        o.mkdir()
    res = CliRunner().invoke(cli, ["train", *ARGS, "--store", str(store)])
    assert res.exit_code == 0, res.output
    assert (store / name / "run.json").is_file() and not dead.exists()
    assert all(o.is_dir() for o in others)
