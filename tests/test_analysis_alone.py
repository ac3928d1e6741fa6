"""Analysing a store loads nothing of the trainer (issue 37 item 5, issue 49 item 1):
`spectrum`, `compare`, `cka`, `nc`, `report`, the API's ``open_store``/``features``/``spectrum``
and `figures`/`tables --no-train` (rendering smoke runs trained before) run in a fresh
interpreter, and afterwards no ``collapse_lab.training`` or ``collapse_lab.sweep`` module is
in ``sys.modules``; only the catalogue commands load the resolver (``runspec``: they name
an entry's runs). The direct imports are checked by tests/test_layers.py; this checks what
actually gets loaded, transitively."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from tests.fixtures import invoke, tiny_train_args

PROBE = textwrap.dedent("""
    import json, sys
    from collapse_lab.cli import cli
    store, out = sys.argv[1], sys.argv[2]
    for what in sys.argv[3:]:  # one interpreter, the commands in turn: after each, what is loaded so far
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
                "report": ["report", "--store", store, "--html", out + "/report.html"],
                "figures": ["figures", "feddecorr-fig2", "--smoke", "--no-train", "--store", store, "--out", out],
                "tables": ["tables", "feddecorr-table10", "--smoke", "--no-train", "--store", store, "--out", out]}[what]
        code = cli.main(args, standalone_mode=False)
        assert code in (0, None), code
      print(what, json.dumps(sorted(m for m in sys.modules if m.startswith("collapse_lab."))))
""")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """The stores are made in this process (what trains them does not matter here); only the
    analysis runs in a fresh interpreter."""
    root = tmp_path_factory.mktemp("alone")
    res = invoke("train", *tiny_train_args(epochs=1, rounds=2, clients=3, alpha="0.5"), "--store", root / "ck",
                 "--keep-local", "last")
    assert res.exit_code == 0, res.output
    for cmd in (["figures", "feddecorr-fig2"], ["tables", "feddecorr-table10"]):  # the catalogue's smoke runs
        res = invoke(*cmd, "--smoke", "--store", root / "smoke", "--out", root / "out", "--workers", "1")
        assert res.exit_code == 0, res.output[-2000:]
    return root


@pytest.mark.slow  # three interpreters, one of them training
@pytest.mark.parametrize("group", [("spectrum", "compare", "cka", "nc", "report", "api"), ("figures", "tables")])
def test_analysing_a_store_loads_no_training_module(store, group):
    catalogue = group[0] == "figures"
    out = store / f"out-{group[0]}"
    res = subprocess.run([sys.executable, "-c", PROBE, str(store / ("smoke" if catalogue else "ck")), str(out), *group],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    trainer = ("training", "sweep") if catalogue else ("training", "sweep", "runspec", "plan")
    lines = [line.split(" ", 1) for line in res.stdout.strip().splitlines() if line.split(" ", 1)[0] in group]
    assert [what for what, _ in lines] == list(group)  # each command ran, in turn
    for what, loaded in map(lambda t: (t[0], json.loads(t[1])), lines):
        assert any(m.startswith("collapse_lab.analysis") for m in loaded)  # the probe sees what was loaded
        assert [m for m in loaded if m.split(".")[1] in trainer] == [], what  # the first command that loads one
    if catalogue:  # the entries were rendered from the store, not skipped
        assert (out / "feddecorr-fig2.png").is_file() and (out / "feddecorr-table10.md").is_file()
