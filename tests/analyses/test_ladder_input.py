"""``collapse-lab ladder``'s input: a rungs file, entries and options that are wrong are one
line and exit 2; the packaged ladder is the default; a subset's rungs and seeds."""
from __future__ import annotations

import json

import pytest

from tests.fixtures import invoke


BAD_RUNGS = [
    (None, "no such file"),
    ("rungs: [\n", "not valid YAML"),
    ("- name: a\n", "a mapping with one key, rungs"),
    ("rungs: []\n", "a non-empty list of rungs"),
    ("rungs: {a: 1}\n", "a mapping with one key, rungs"),
    ("rungs:\n- 5\n", "rung 1 must be a mapping"),
    ("rungs:\n- name: 'a b'\n", "rung 1: name must be a short word"),
    ("rungs:\n- set: {lr: 0.1}\n", "rung 1: name must be a short word"),
    ("rungs:\n- name: a\n  sett: {lr: 0.1}\n", "rung a: unknown key 'sett'"),
    ("rungs:\n- name: a\n  set: [lr, 0.1]\n", "rung a: set must be a mapping"),
    ("rungs:\n- name: a\n  set: {bogus: 1}\n", "rung a: --set bogus: no such train option"),
    ("rungs:\n- name: a\n  set: {rounds: 1}\n", "rung a: rounds 1: give 2 or more"),  # refused before it trains
    ("rungs:\n- name: a\n  set: {lr: 0.1, lr: 0.2}\n", "key 'lr' is given twice in one mapping (line 3)"),
    ("rungs:\n- name: a\n  set: {local_epochs: 1.5}\n", "rung a: --set: --local-epochs 1.5 is not a whole number"),
    ("rungs:\n- name: a\n  set: {lr: -1}\n", "--lr must be > 0"),
    ("rungs:\n- name: a\n  set: {device: cpu}\n", "rung a: --set device: device is not part of what a run computes"),
    ("rungs:\n- name: a\n  set: {dataset_options: {x: 1}}\n", "rung a: dataset_options: give one value"),
    ("rungs:\n- name: a\n  set: {lr: 0.1}\n  entries: [feddecorr-fig33]\n",
     "rung a: entry 'feddecorr-fig33' is not a figure of the catalogue"),
    # a rung only for entries this ladder does not climb is skipped: here none is left
    ("rungs:\n- name: a\n  set: {lr: 0.1}\n  entries: [feddecorr-fig3]\n", "no rung applies to feddecorr-fig2"),
    ("rungs:\n- name: a\n  seeds: [0, 0]\n", "rung a: seeds must be a list of distinct seeds"),
    ("rungs:\n- name: a\n  set: {lr: 0.1}\n  entries: feddecorr-fig2\n", "rung a: entries must be a list"),
    ("rungs:\n- name: a\n  note: 5\n", "rung a: note must be a text"),
    ("rungs:\n- name: a\n- name: a\n  set: {lr: 0.1}\n", "rung name 'a' is given twice"),
    ("rungs:\n- name: a\n  set: {lr: 0.1}\n- name: b\n  set: {lr: 0.1}\n", "rungs a and b set the same options"),
    ("rungs:\n- name: a\n  set: {alpha: 0.1}\n", "no rung applies to feddecorr-fig2"),
    ("rungs:\n- name: a\n  set: {alpha: 0.1}\n  entries: [feddecorr-fig2]\n",
     "rung a: does not apply to feddecorr-fig2: --set alpha: feddecorr-fig2 varies alpha"),
]


def test_a_ladder_of_a_subset_skips_the_rungs_of_other_entries_and_a_rung_may_set_the_seeds(tmp_path):
    from collapse_lab.catalogue.rungs import load_rungs

    f = tmp_path / "rungs.yaml"
    f.write_text("rungs:\n- name: a\n  set: {lr: 0.1}\n  entries: [feddecorr-fig3]\n- name: b\n  set: {lr: 0.2}\n"
                 "  seeds: [0, 1, 2, 3]\n  entries: [feddecorr-fig2, journal-fig4]\n")
    (b,) = load_rungs(f, ["feddecorr-fig2"])
    assert b.name == "b" and b.entries == ("feddecorr-fig2",) and b.seeds == (0, 1, 2, 3)
    res = invoke("ladder", "feddecorr-fig2", "--preset", "quick", "--rungs", f, "--store", tmp_path / "st",
                 "--out", tmp_path / "lad", "--dry-run", "--json")
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)
    assert row["rung"] == "b" and row["runs"] == 16  # 4 alphas x 4 seeds: the rung's seeds replace the spec's 3


def test_the_packaged_ladder_is_the_default_and_plans_without_the_data(tmp_path, monkeypatch):
    """``ladder ENTRY --dry-run`` with no --rungs reads the study's ladder as installed
    (analyses/ladder/rungs.yaml, in the wheel) and plans it with no data at hand."""
    import yaml

    from collapse_lab.catalogue.rungs import packaged

    monkeypatch.chdir(tmp_path)  # an empty folder: nothing of the repository's docs/
    monkeypatch.delenv("COLLAPSE_LAB_DATA", raising=False)
    ladder = packaged()
    assert set(ladder) == {"rungs", "rungs-gpu"}
    want = [r["name"] for r in yaml.safe_load(ladder["rungs"].read_text())["rungs"]
            if "feddecorr-fig2" in r.get("entries", ["feddecorr-fig2"])]
    res = invoke("ladder", "feddecorr-fig2", "--dry-run", "--json")
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert [r["rung"] for r in got] == want and all(0 <= r["to_train"] <= r["runs"] for r in got)
    assert got[0]["to_train"] == got[0]["runs"] == 12  # nothing kept here: the first rung trains all it reads
    assert "no data to match kept records against" not in res.stderr  # --json: the JSON alone on stdout
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize("text,message", BAD_RUNGS)
def test_a_bad_rungs_file_is_one_line_and_exit_2(tmp_path, text, message):
    f = tmp_path / "rungs.yaml"
    if text is not None:
        f.write_text(text)
    res = invoke("ladder", "feddecorr-fig2", "--preset", "quick", "--rungs", f, "--store", tmp_path / "st",
                 "--out", tmp_path / "lad")
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in res.output, res.stderr
    assert not (tmp_path / "lad").exists() and not (tmp_path / "st").exists()  # nothing written


@pytest.mark.parametrize("args,message", [
    (["fednc-fig1"], "fednc-fig1 has no claims to check"),
    (["nosuch"], "unknown figure 'nosuch'"),
    (["feddecorr-table1"], "unknown figure 'feddecorr-table1'"),
    (["feddecorr-fig2", "--workers", "0"], "--workers must be >= 1"),
    (["feddecorr-fig2", "--no-train", "--dry-run"], "--dry-run has no effect with --no-train"),
    (["feddecorr-fig2", "--no-train", "--workers", "2"], "--workers has no effect with --no-train"),
    (["feddecorr-fig2", "--no-train", "--rung", "a"], "--rung has no effect with --no-train"),
    (["feddecorr-fig2", "--rung", "b"], "--rung b: no such rung in --rungs"),
])
def test_bad_entries_and_options_are_one_line(tmp_path, args, message):
    (tmp_path / "r.yaml").write_text("rungs:\n- name: a\n")
    res = invoke("ladder", *args, "--preset", "quick", "--rungs", tmp_path / "r.yaml", "--store", tmp_path / "st",
                 "--out", tmp_path / "lad")
    assert res.exit_code == 2 and message in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.output
    assert not (tmp_path / "lad").exists()
