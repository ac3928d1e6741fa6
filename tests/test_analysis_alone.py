"""Analysing a store loads nothing of the trainer (issue 37 item 5): `spectrum`, `compare`,
`cka`, `nc`, `report` and the API's ``open_store``/``features``/``spectrum`` run in a fresh
interpreter, on a store trained before, and afterwards no ``collapse_lab.training`` module
is in ``sys.modules``. The direct imports are checked by tests/test_layers.py; this checks
what actually gets loaded, transitively."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from tests.fixtures import tiny_train_args

PROBE = textwrap.dedent("""
    import json, sys
    from collapse_lab.cli import cli
    store, out, what = sys.argv[1], sys.argv[2], sys.argv[3]
    if what == "api":
        import collapse_lab as cl
        runs = cl.open_store(store)
        run = runs[0]
        z = run.features()
        sv, floor = run.spectrum()
        assert z.dim() == 2 and sv.dim() == 1
    else:
        args = {"spectrum": ["spectrum", "--store", store, "--out", out, "--json"],
                "compare": ["compare", "--store", store, "--out", out, "--json"],
                "cka": ["cka", "--store", store, "--json"],
                "nc": ["nc", "--store", store, "--json"],
                "report": ["report", "--store", store, "--out", out]}[what]
        code = cli.main(args, standalone_mode=False)
        assert code in (0, None), code
    print(json.dumps(sorted(m for m in sys.modules if m.startswith(("collapse_lab.training", "collapse_lab.resolve",
                                                                    "collapse_lab.sweep")))))
""")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("alone")
    res = subprocess.run([sys.executable, "-m", "collapse_lab.entry", "train", *tiny_train_args(
        epochs=1, rounds=2, clients=3, alpha="0.5"), "--store", str(root / "ck"), "--keep-local", "last"],
        capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return root


@pytest.mark.slow  # seven interpreters, one of them training
@pytest.mark.parametrize("what", ["spectrum", "compare", "cka", "nc", "report", "api"])
def test_analysing_a_store_loads_no_training_module(store, what):
    res = subprocess.run([sys.executable, "-c", PROBE, str(store / "ck"), str(store / f"out-{what}"), what],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    loaded = json.loads(res.stdout.strip().splitlines()[-1])
    assert loaded == [], loaded
