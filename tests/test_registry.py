"""One registry pattern: a plugin is one file in its package, found without editing any
``__init__``. Each test copies the package, drops one new plugin file of every kind into the
copy and trains a run that uses all of them, in a fresh interpreter; CLI help and errors
list the new names."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from collapse_lab.errors import CollapseLabError
from collapse_lab.registry import Registry, option_names

PKG = Path(__file__).resolve().parents[1] / "collapse_lab"

PLUGINS = {
    "data/toyset.py": '''
        import torch
        from . import DATASETS
        from .base import Dataset

        @DATASETS.register("toyset", model="toynet")
        def load_toyset(n: int = 40) -> Dataset:
            g = torch.Generator().manual_seed(0)
            x, y = torch.randn(n, 4, generator=g), torch.arange(n) % 2
            return Dataset("toyset", x, y, x[:10], y[:10], num_classes=2)
    ''',
    "models/toynet.py": '''
        import torch.nn as nn
        from . import MODELS

        class Toy(nn.Module):
            def __init__(self, num_classes, d_in, width):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(d_in, width), nn.ReLU())
                self.feature_dim = width
                self.classifier = nn.Linear(width, num_classes)

            def forward(self, x):
                z = self.body(x)
                return self.classifier(z), z

        @MODELS.register("toynet")
        def toynet(num_classes, input_shape, width: int = 6):
            return Toy(num_classes, input_shape[0], width)
    ''',
    "partition/halves.py": '''
        import numpy as np
        from . import PARTITIONS
        from .base import Partition

        @PARTITIONS.register("halves")
        def halves(labels, num_classes, num_clients, rng, min_size: int = 10, first: float = 0.5):
            """The first client takes the share ``first`` (a new option), the rest split the remainder."""
            cut = int(round(float(first) * len(labels)))
            rest = np.array_split(np.arange(cut, len(labels)), num_clients - 1)
            return Partition.from_indices([np.arange(cut), *rest], labels, num_classes)
    ''',
    "partition/tilted.py": '''
        import numpy as np
        from . import PARTITIONS
        from .base import Partition

        @PARTITIONS.register("tilted")
        def tilted(labels, num_classes, num_clients, rng, alpha: float = 1.0):
            """A split that takes the shared alpha (a share: client 0 gets alpha / (1 + alpha))."""
            cut = int(round(len(labels) * float(alpha) / (1.0 + float(alpha))))
            rest = np.array_split(np.arange(cut, len(labels)), num_clients - 1)
            return Partition.from_indices([np.arange(cut), *rest], labels, num_classes)
    ''',
    "methods/fedtoy.py": '''
        from . import METHODS, Method, fedavg_of

        @METHODS.register("fedtoy")
        class FedToy(Method):
            """FedAvg under another name, with an option."""
            defaults = {"gain": 1.0}

            def aggregate(self, r, global_state, results):
                return fedavg_of(results)
    ''',
    "regularizers/zsquare.py": '''
        from . import REGULARIZERS

        @REGULARIZERS.register("zsquare", defaults={"scale": 1.0, "pool": "mean"}, choices={"pool": ("mean", "max")},
                               presets={"quick": {"pool": "max"}}, beta=0.5)
        def zsquare(scale=1.0, pool="mean"):
            return lambda z, logits=None: scale * (z.pow(2).mean() if pool == "mean" else z.pow(2).max())
    ''',
    "augment/invert.py": '''
        import torch
        from . import STEPS

        @STEPS.register("invert")
        class Invert:
            def draw(self, n, generator):
                return torch.rand(n, generator=generator) < 0.5

            def apply(self, x, params):
                return torch.where(params[:, None, None, None], 255 - x, x)
    ''',
}

# one fresh interpreter on the copy: the new augmentation step applied, then each command
# line in turn (its exit status, stdout and stderr), as ``collapse-lab`` would run it
DRIVER = '''
import contextlib, io, json, sys, torch, collapse_lab
from collapse_lab.augment import Pipeline
from collapse_lab.cli import cli
x = torch.full((4, 1, 2, 2), 10, dtype=torch.uint8)
y = Pipeline("invert")(x, torch.Generator().manual_seed(0))
got = {"where": collapse_lab.__file__, "inverted": sorted({int(v) for v in y.flatten()}), "calls": []}
for args in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(args, prog_name="collapse-lab", standalone_mode=False)
        except SystemExit as e:
            code = e.code
    got["calls"].append({"code": code or 0, "stdout": out.getvalue(), "stderr": err.getvalue()})
print(json.dumps(got))
'''


@pytest.fixture(scope="module")
def package_with_plugins(tmp_path_factory):
    root = tmp_path_factory.mktemp("pkg")
    shutil.copytree(PKG, root / "collapse_lab", ignore=shutil.ignore_patterns("__pycache__"))
    for rel, code in PLUGINS.items():
        (root / "collapse_lab" / rel).write_text(textwrap.dedent(code))
    env = {**os.environ, "PYTHONPATH": str(root)}
    return root, env


def _runs(folder):
    return [json.loads((p / "run.json").read_text()) for p in sorted(folder.iterdir()) if (p / "run.json").is_file()]


@pytest.fixture(scope="module")
def plugin_calls(package_with_plugins, tmp_path_factory):
    """The commands below, run once in one interpreter on the copy with the new plugins:
    {name: {code, stdout, stderr}}, the store folder, and what the driver saw."""
    root, env = package_with_plugins
    tmp = tmp_path_factory.mktemp("plugin-runs")
    small = ["--clients", "2", "--rounds", "1", "--local-epochs", "1", "--batch-size", "8", "--device", "cpu"]
    base = ["train", "--dataset", "toyset", "--partition", "halves", "--reg", "zsquare", *small]
    (tmp / "c.yaml").write_text("partition_options: {first: 0.75}\nreg_options: {scale: 2.0}\npreset: quick\n")
    calls = {
        "all": ["train", "--dataset", "toyset", "--partition", "halves", "--method", "fedtoy", "--method-option",
                "gain=2", "--reg", "zsquare", *small, "--store", str(tmp / "ck"), "--json"],
        # the partition's new option and the regularizer's options (a number, and text with its
        # choices and a preset's value), each declared in its one file, from the command line
        # and from a config file
        "flags": [*base, "--store", str(tmp / "flags"), "--partition-option", "first=0.25", "--reg-option",
                  "scale=3.0", "--reg-option", "pool=max"],
        "file": [*base, "--store", str(tmp / "file"), "--config", str(tmp / "c.yaml")],
        # a partition of its own that takes alpha: each --alpha is a run, as with dirichlet (the
        # resolver asks the partition what it takes, not its name)
        "tilted": ["train", "--dataset", "toyset", "--partition", "tilted", "--alpha", "1", "--alpha", "3", *small,
                   "--store", str(tmp / "tilted")],
        "bad_partition": [*base, "--store", str(tmp / "bad"), "--partition-option", "second=1"],
        "bad_reg": [*base, "--store", str(tmp / "bad"), "--reg-option", "pool=median"],
        "help": ["train", "--help"],
        "bad_name": ["train", "--reg", "nope"],
    }
    res = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(list(calls.values()))], env=env, cwd=root,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-800:]
    got = json.loads(res.stdout)
    assert got["where"].startswith(str(root))  # the copy, not the installed package
    return dict(zip(calls, got["calls"])), tmp, got


@pytest.mark.slow
def test_one_file_per_plugin_is_found_and_trains(plugin_calls):
    out, tmp, got = plugin_calls
    assert set(got["inverted"]) <= {10, 245} and len(got["inverted"]) == 2  # the new step ran
    assert out["all"]["code"] == 0, out["all"]["stderr"][-800:]
    (meta,) = _runs(tmp / "ck")
    assert (meta["dataset"], meta["model"], meta["partition"], meta["method"], meta["reg"]) == (
        "toyset", "toynet", "halves", "fedtoy", "zsquare")
    assert meta["method_options"] == {"gain": 2.0} and meta["beta"] == 0.5 and meta["feature_dim"] == 6
    assert meta["client_sizes"] == [20, 20] and meta["status"] == "complete"
    (run,) = [p for p in (tmp / "ck").iterdir() if (p / "run.json").is_file()]
    events = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert all(e["reg"] > 0 for e in events if e["event"] == "local_epoch")  # the regularizer was applied
    assert meta["reg_options"] == {"scale": 1.0, "pool": "mean"}  # the declared defaults, recorded
    assert out["help"]["code"] == 0
    for name in ("toyset", "toynet", "halves", "fedtoy", "zsquare", "invert"):
        assert name in out["help"]["stdout"], name


@pytest.mark.slow
def test_a_plugins_options_come_from_flags_and_from_a_config_file(plugin_calls):
    out, tmp, _ = plugin_calls
    for how, first, scale in (("flags", 0.25, 3.0), ("file", 0.75, 2.0)):
        assert out[how]["code"] == 0, (how, out[how]["stderr"][-800:])
        (meta,) = _runs(tmp / how)
        assert meta["partition_options"] == {"first": first} and meta["reg_options"] == {"scale": scale, "pool": "max"}
        assert meta["client_sizes"] == [round(40 * first), 40 - round(40 * first)]


@pytest.mark.slow
def test_a_partition_plugin_that_takes_alpha_makes_a_run_per_alpha(plugin_calls):
    out, tmp, _ = plugin_calls
    assert out["tilted"]["code"] == 0, out["tilted"]["stderr"][-800:]
    metas = sorted(_runs(tmp / "tilted"), key=lambda m: float(m["alpha"]))
    assert [(m["alpha"], m["client_sizes"]) for m in metas] == [("1", [20, 20]), ("3", [30, 10])]


@pytest.mark.slow
def test_a_plugins_bad_option_or_name_is_one_line_and_writes_nothing(plugin_calls):
    out, tmp, _ = plugin_calls
    bad = out["bad_partition"]
    assert bad["code"] == 2 and "partition halves has no such option; its options: first" in bad["stderr"]
    bad = out["bad_reg"]
    assert bad["code"] == 2 and "regularizer zsquare option pool='median': use mean or max" in bad["stderr"]
    assert not (tmp / "bad").exists()
    bad = out["bad_name"]
    assert bad["code"] == 2 and "zsquare" in bad["stderr"] and "feddecorr" in bad["stderr"]


def test_registry_lookups_list_names_and_refuse_unknown_options():
    reg = Registry("widget", flag="--widget")
    reg.register("b")(lambda size=1, colour="red": (size, colour))
    reg.register("a")(lambda: None)
    assert reg.names() == ["a", "b"] and "a" in reg and "c" not in reg
    with pytest.raises(CollapseLabError, match="--widget: unknown widget 'c'; choose one of: a, b"):
        reg.get("c")
    with pytest.raises(CollapseLabError, match="widget b has no option colur; its options: size, colour"):
        reg.call("b", colur="blue")
    assert reg.call("b", colour="blue") == (1, "blue")
    with pytest.raises(ValueError, match="registered twice"):
        reg.register("a")(lambda: None)
    strict = Registry("x", check=lambda name, obj, info: option_names(obj))  # as the plugin kinds check
    with pytest.raises(TypeError, match="takes \\*\\*kwargs"):
        strict.register("k")(lambda **kw: None)
