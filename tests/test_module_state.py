"""State is passed, not stored (issue 37): no module of the package keeps what a command or
a caller chose. Read from the source with ``ast``: every module-level name that a function
writes (item assignment, a mutating method, ``global``) is listed here with why it may be,
and none of them holds a user's choice; the command-line options that used to be kept in a
module (``--data-root``, ``--model-factory``, ``--layer``) travel in the invocation's click
context and reach the next command in one process no more."""
from __future__ import annotations

import ast
from pathlib import Path

from click.testing import CliRunner

PKG = Path(__file__).resolve().parents[1] / "collapse_lab"
MUTATORS = {"append", "add", "update", "clear", "pop", "setdefault", "extend", "insert", "remove", "discard",
            "popitem"}
# module-level state written after import, and why it is not a user's choice
ALLOWED = {
    ("collapse_lab/data/__init__.py", "_LOADED"):
        "memo of loaded data sets, keyed by every option that determines one (the resolver and prepare "
        "of one run read the same object)",
    ("collapse_lab/analysis/ladder.py", "_CLAIMS"):
        "memo of a ladder record's claims, keyed by the record's whole content and its entry's spec text "
        "(a pure function of both; a copy is handed out)",
    ("collapse_lab/files.py", "_warned"): "a torn JSONL file is reported once per process (a diagnostic)",
    ("collapse_lab/store/lock.py", "_held"):
        "the run locks this process holds: POSIX locks belong to the process, so their descriptors do too",
    ("collapse_lab/signals.py", "_RECEIVED"):
        "the stop signals this process was sent: a signal is sent to the process, and a failure after one "
        "is the stop's doing",
}


def written_module_names(source: str) -> set[str]:
    tree = ast.parse(source)
    names = {t.id for node in tree.body
             for t in (node.targets if isinstance(node, ast.Assign)
                       else [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else [])
             if isinstance(t, ast.Name)}
    out = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Global):
                out.update(node.names)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS
                  and isinstance(node.func.value, ast.Name)):
                out.add(node.func.value.id)
            elif isinstance(node, (ast.Assign, ast.AugAssign)):
                for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                        out.add(t.value.id)
    return out & names


def test_no_module_keeps_state_but_the_listed_caches_and_locks():
    found = {(str(p.relative_to(PKG.parent)), n) for p in PKG.rglob("*.py") for n in written_module_names(p.read_text())}
    assert found == set(ALLOWED), found ^ set(ALLOWED)


def test_the_scan_sees_each_way_a_module_global_is_written():
    src = ("A = {}\nB = []\nC = set()\nD = 0\nE = {}\nF = {}\n"
           "def f():\n    A['k'] = 1\n    B.append(1)\n    global D\n    D = 1\n    e = {}\n    e['x'] = 1\n"
           "g = lambda: C.add(1)\n")
    assert written_module_names(src) == {"A", "B", "C", "D"}


def _factory(num_classes, input_shape):  # a model factory a command names; never called here
    raise AssertionError("not built")


def test_a_commands_data_root_and_model_factory_do_not_reach_the_next_command(tmp_path, monkeypatch):
    """One process, two commands: the options of the first are gone in the second (they used
    to stay in module globals, and once leaked into a later command)."""
    import click

    from collapse_lab.cli import cli
    from collapse_lab.actions.selection import features_of
    from collapse_lab.commands import common

    monkeypatch.delenv("COLLAPSE_LAB_DATA", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    seen = []

    @click.command("probe-state")
    @common.data_root_option
    @common.model_factory_options[0]
    @common.model_factory_options[1]
    def probe(data_root, model_factory, layer):  # each option arrives as an argument, nowhere else
        fs = features_of(data_root, model_factory, layer)
        seen.append((data_root, fs.factory_spec, fs.layer, fs.data_root))

    cli.add_command(probe)
    try:
        r1 = CliRunner().invoke(cli, ["probe-state", "--data-root", str(tmp_path), "--model-factory",
                                      "tests.test_module_state:_factory", "--layer", "fc"])
        r2 = CliRunner().invoke(cli, ["probe-state"])
    finally:
        cli.commands.pop("probe-state")
    assert r1.exit_code == 0 and r2.exit_code == 0, (r1.output, r2.output)
    assert seen == [(str(tmp_path), "tests.test_module_state:_factory", "fc", str(tmp_path)), (None, None, None, None)]
