"""The committed ladder outputs (docs/scale/a and b) are a function of their records alone:
written again from the kept records, LADDER.md, ladder.csv, ladder.json and ladder.png are the
same bytes; and every record file equals the record the outputs were written from."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

SCALE = Path(__file__).resolve().parents[2] / "docs" / "scale"


def _other(d: dict) -> list[dict] | None:
    keys = d.get("other_sample")
    if not keys:
        return None
    return [json.loads((SCALE / "a" / "records" / f"{k['rung']}--{k['entry']}.json").read_text()) for k in keys]


@pytest.mark.parametrize("sample", ["a", "b"])
def test_the_committed_outputs_are_a_regeneration_of_the_records(sample, tmp_path):
    from collapse_lab.catalogue.ladder_report import regenerate

    src = SCALE / sample
    d = json.loads((src / "ladder.json").read_text())
    for r in d["records"]:
        if "na" in r:
            continue
        kept = json.loads((src / "records" / f"{r['rung']}--{r['entry']}.json").read_text())
        # the kept file, but its cost: the ladder re-costs a kept record at each render
        assert {**kept, "estimated_seconds": r["estimated_seconds"]} == r
    regenerate(tmp_path, src, _other(d))
    for name in ("LADDER.md", "ladder.csv", "ladder.json", "ladder.png"):
        assert (tmp_path / name).read_bytes() == (src / name).read_bytes(), name


@pytest.mark.slow  # renders sample b's ladder from its records (about 15 s)
def test_ladder_no_train_writes_the_committed_outputs_with_no_store_and_no_data(tmp_path, monkeypatch):
    """``ladder --no-train`` from a copy of sample b's records, with an empty store and no data
    set anywhere (no --data-root, no COLLAPSE_LAB_DATA, no config): each kept record is taken by
    its runs and rounds, said in one line, and the four files are the committed bytes."""
    import shutil

    from click.testing import CliRunner

    from collapse_lab.cli import cli

    monkeypatch.delenv("COLLAPSE_LAB_DATA", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    out = tmp_path / "b"
    shutil.copytree(SCALE / "b" / "records", out / "records")
    res = CliRunner().invoke(cli, ["ladder", "feddecorr-fig2", "feddecorr-fig3", "journal-fig4", "journal-fig6",
                                   "--no-train", "--out", str(out), "--store", str(tmp_path / "empty"),
                                   "--other-sample", str(SCALE / "a")])
    assert res.exit_code == 0, res.output
    assert "each kept record is taken by its runs and rounds, the images it names unchecked" in res.stderr
    for name in ("LADDER.md", "ladder.csv", "ladder.json", "ladder.png"):
        assert (out / name).read_bytes() == (SCALE / "b" / name).read_bytes(), name
