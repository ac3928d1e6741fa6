"""Work done once (issue 49 item 4): an entry's runs are resolved once per command, the
trainer's plan is made once per run, and ``--data-root`` is declared once with one meaning
(``theory`` reads ``$COLLAPSE_LAB_DATA`` as every other command does)."""
from __future__ import annotations

import ast
import json
from pathlib import Path

from click.testing import CliRunner

from collapse_lab.cli import cli
from tests.fixtures import tiny_train_args

PKG = Path(__file__).resolve().parents[1] / "collapse_lab"


def data_root_declarations() -> list[str]:
    """Every ``click.option("--data-root", ...)`` in the package, as file:line."""
    out = []
    for p in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text())):
            if (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "option" and node.args
                    and isinstance(node.args[0], ast.Constant) and node.args[0].value == "--data-root"):
                out.append(f"{p.relative_to(PKG)}:{node.lineno}")
    return out


def test_data_root_is_declared_once():
    assert data_root_declarations() == [d for d in data_root_declarations() if d.startswith("commands/common.py")]
    assert len(data_root_declarations()) == 1


def test_theory_reads_the_data_root_of_the_environment(mnist_root, tmp_path, monkeypatch):
    """With $COLLAPSE_LAB_DATA holding MNIST and no --data-root, theory picks MNIST as it does
    with --data-root (it used to read the flag alone)."""
    root, _, _ = mnist_root
    monkeypatch.setenv("COLLAPSE_LAB_DATA", str(root))
    res = CliRunner().invoke(cli, ["theory", "align", "--alpha", "inf", "--clients", "2", "--width", "8", "--eta", "1e-3",
                                   "--horizon", "0.004", "--out", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    assert all(Path(f).name.startswith("align_mnist_") for f in json.loads(res.stdout)["figures"])


def test_an_entrys_runs_are_resolved_once_per_command(tmp_path, monkeypatch):
    """figures plans, trains (here nothing: --no-train) and renders from one resolution of the
    entry's spec; with --set, one more (the runs without it, to check that it changes some)."""
    import collapse_lab.plan as plan

    calls = []
    real = plan.expand
    monkeypatch.setattr(plan, "expand", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    for extra, want in (([], 1), (["--set", "lr=0.02"], 2)):
        calls.clear()
        CliRunner().invoke(cli, ["figures", "feddecorr-fig2", "--no-train", "--store", str(tmp_path / "s"),
                                 "--out", str(tmp_path / "f"), *extra])
        assert len(calls) == want, (extra, calls)


def test_the_trainers_plan_is_made_once_per_run(tmp_path, monkeypatch):
    """The resolver checks the speed options but plans nothing; prepare plans each run once
    and the engine follows that plan."""
    from collapse_lab.training import fast

    calls = []
    real = fast.plan_trainer
    monkeypatch.setattr(fast, "plan_trainer", lambda *a, **k: calls.append(a[0].run_name()) or real(*a, **k))
    res = CliRunner().invoke(cli, ["train", *tiny_train_args(epochs=1, rounds=1, clients=2, alpha="0.5"),
                                   "--seed", "0", "--seed", "1", "--store", str(tmp_path / "ck")])
    assert res.exit_code == 0, res.output
    assert len(calls) == 2 and len(set(calls)) == 2, calls
