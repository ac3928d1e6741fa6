"""``figures``/``tables --set KEY=VALUE`` (issue 48, item 1): overrides of every run of an
entry, part of the runs' identity and stated beside the numbers."""
from __future__ import annotations

import json

import pytest

from collapse_lab.plan import entry_runs
from collapse_lab.analysis.catalogue import pick
from tests.fixtures import invoke


def test_an_override_reaches_every_run_and_names_other_runs():
    (e,) = pick(["feddecorr-fig1"], "figure")
    plain = entry_runs(e, "quick")
    over = entry_runs(e, "quick", overrides={"lr": 0.02})
    assert len(over) == len(plain) == 9 and {c.lr for c in plain} == {0.05} and {c.lr for c in over} == {0.02}
    assert not {c.run_name() for c in plain} & {c.run_name() for c in over}
    # everything else as before: the same alphas, regularizers and seeds in the same order
    strip = lambda c: {k: v for k, v in c.identity().items() if k != "lr"}  # noqa: E731
    assert [strip(c) for c in plain] == [strip(c) for c in over]


def test_a_mapping_is_merged_key_by_key():
    from collapse_lab.plan import with_overrides

    spec = {"base": {"dataset_options": {"a": 1, "b": 2}, "lr": 0.1}, "grid": {"alpha": [0.1, 1.0]}, "seeds": [0]}
    out = with_overrides("e", "cpu", spec, {"dataset_options": {"b": 3}, "rounds": 4})
    assert out["base"] == {"dataset_options": {"a": 1, "b": 3}, "lr": 0.1, "rounds": 4} and out["grid"] == spec["grid"]
    assert spec["base"]["dataset_options"] == {"a": 1, "b": 2}  # the entry's own spec is untouched


@pytest.mark.slow
def test_figures_with_set_train_other_runs_and_say_so(tmp_path):
    store, out = tmp_path / "s", tmp_path / "f"
    out.mkdir()  # a default render already there (its files stand for it): never overwritten by --set
    default = {n: f"the default render's {n}" for n in ("feddecorr-fig1.json", "feddecorr-fig1.png", "CLAIMS-quick-smoke.md",
                                                          "claims-quick-smoke.json")}
    for n, text in default.items():
        (out / n).write_text(text)
    res = invoke("figures", "feddecorr-fig1", "--smoke", "--set", "lr=0.02", "--store", store, "--out", out, "--json")
    assert res.exit_code == 0, res.output
    # runs that cannot stack are said, not trained alone in silence (issue 47)
    assert "3 run(s) cannot stack and train alone: --model resnet20 has buffers (BatchNorm statistics)" in res.stderr
    (rec,) = json.loads(res.stdout)["entries"]
    assert rec["overrides"] == {"lr": 0.02}
    runs = [json.loads(p.read_text()) for p in store.glob("*/run.json")]
    assert len(runs) == 3 and {r["lr"] for r in runs} == {0.02}
    assert {n: (out / n).read_text() for n in default} == default
    assert rec["files"] == [str(out / "set-lr=0.02" / f"feddecorr-fig1.{x}") for x in ("pdf", "png")]
    out = out / "set-lr=0.02"  # beside the default render
    saved = json.loads((out / "feddecorr-fig1.json").read_text())
    assert saved["overrides"] == {"lr": 0.02}
    assert "every run with --set lr=0.02 (replacing the preset's value named above)" in saved["differs"]
    (claims,) = json.loads((out / "claims-quick-smoke.json").read_text())
    assert claims["overrides"] == {"lr": 0.02}
    assert "feddecorr-fig1 (--set lr=0.02)" in (out / "CLAIMS-quick-smoke.md").read_text()


def test_rounds_is_an_override_though_not_part_of_a_runs_name():
    """A run of R rounds is the first R rounds of a longer one (same folder): --set rounds=3
    changes what an entry reads, so it is not refused as changing nothing (the refusal
    compares names and rounds)."""
    from collapse_lab.catalogue.planning import overridden
    from collapse_lab.plan import Plan

    (e,) = pick(["feddecorr-fig1"], "figure")
    plain = entry_runs(e, "quick")
    got = overridden(e, Plan("quick", overrides={"rounds": 3}), None)
    assert [c.run_name() for c in got] == [c.run_name() for c in plain] and {c.rounds for c in got} == {3}
    with pytest.raises(Exception, match="changes none of feddecorr-fig1's runs"):
        overridden(e, Plan("quick", overrides={"rounds": plain[0].rounds}), None)


def test_set_clients_0_is_refused_before_anything_trains(tmp_path):
    from tests.fixtures import invoke

    res = invoke("figures", "feddecorr-fig2", "--set", "clients=0", "--store", tmp_path / "s", "--out", tmp_path / "o")
    assert res.exit_code == 2 and "--clients 0 means one client per domain" in res.output
    assert not (tmp_path / "s").exists() and not (tmp_path / "o").exists()
