"""Every ladder number docs/scale.md quotes in a numbers block is what docs/scale_numbers.py
prints from the committed records (and the script's dead-unit counts match a record read
here by hand)."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _script():
    sys.path.insert(0, str(DOCS))
    try:
        import scale_numbers
    finally:
        sys.path.remove(str(DOCS))
    return scale_numbers


def test_every_numbers_block_of_the_scale_page_is_printed_from_the_records():
    sn = _script()
    for name, block in sn.BLOCKS.items():
        assert sn.block_on_pages(name) == block(), name


def test_the_dead_units_block_reads_the_cpu_record():
    sn = _script()
    rec = json.loads((DOCS / "scale" / "a" / "records" / "cpu--feddecorr-fig3.json").read_text())
    fd = [m["dead_units"] for m in rec["regime"]["runs"] if m["reg"] != "none" and m["alpha"] == "0.05"]
    assert f"FedDecorr at alpha 0.05: {min(fd)}-{max(fd)} of 256 dead" in sn.dead()


def test_the_layers_findings_on_the_analyses_page_are_printed_from_the_kept_json():
    import subprocess

    page = (DOCS / "analyses.md").read_text()
    sn = _script()
    for name, path in (("layers-cnn", "cnn_layers.json"), ("layers-resnet20", "resnet20_logged.json")):
        got = subprocess.run([sys.executable, str(DOCS / "layers_finding.py"), str(DOCS / "layers" / path), "--findings"],
                             capture_output=True, text=True, check=True).stdout.rstrip("\n")
        assert sn.page_block(name, page) == got, name


def test_the_times_table_of_the_analyses_page_is_printed_from_the_timings_record():
    sys.path.insert(0, str(DOCS))
    try:
        import timings
    finally:
        sys.path.remove(str(DOCS))
    sn = _script()
    page = (DOCS / "analyses.md").read_text()
    assert sn.page_block("timings", page) == timings.table(json.loads((DOCS / "timings.json").read_text()))


def test_the_times_say_how_much_of_the_cores_other_processes_used():
    sys.path.insert(0, str(DOCS))
    try:
        import timings
    finally:
        sys.path.remove(str(DOCS))
    assert timings.others_share(10.0, 4.0, 6.0, 2) == 0.5  # 6 CPU seconds of others over 6 s x 2 cores
    assert timings.others_share(3.9, 4.0, 6.0, 2) == 0.0  # clock ticks round the machine's total down
    busy = timings.busy_seconds()
    assert busy is None or busy > 0


def test_the_real_data_pages_training_times_are_the_cpu_records():
    """docs/real-data.md's "each run took A-B s" is the range of the cpu record's train_seconds,
    and its "about C-D minutes" for four runs two at a time is twice that range."""
    import re

    rec = json.loads((DOCS / "scale" / "a" / "records" / "cpu--feddecorr-fig2.json").read_text())
    secs = [m["train_seconds"] for m in rec["regime"]["runs"]]
    page = (DOCS / "real-data.md").read_text()
    a, b = map(int, re.search(r"each run took (\d+)-(\d+) s", page).groups())
    assert (a, b) == (round(min(secs)), round(max(secs)))
    c, d = map(float, re.search(r"take about ([\d.]+)-([\d.]+) minutes", page).groups())
    assert (c, d) == (round(2 * min(secs) / 60 * 2) / 2, round(2 * max(secs) / 60 * 2) / 2)  # to half a minute


def test_a_damaged_or_missing_record_is_one_line_not_a_traceback(tmp_path, monkeypatch):
    sn = _script()
    monkeypatch.setattr(sn, "SCALE", tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "ladder.json").write_text('{"records": [')  # cut short
    import io
    from contextlib import redirect_stderr

    err = io.StringIO()
    with redirect_stderr(err):
        assert sn.guarded(["summary"]) == 2
    assert err.getvalue().startswith("scale_numbers: a record under") and "Traceback" not in err.getvalue()
    (tmp_path / "a" / "ladder.json").unlink()
    err = io.StringIO()
    with redirect_stderr(err):
        assert sn.guarded(["summary"]) == 2
    assert "ladder.json: No such file or directory" in err.getvalue()


def test_the_methods_findings_page_is_printed_from_the_committed_evidence():
    """docs/beyond.md's findings block is what docs/beyond_numbers.py prints from
    docs/beyond/records/runs/ (nothing computed before all runs are in)."""
    sys.path.insert(0, str(DOCS))
    try:
        import beyond_numbers
    finally:
        sys.path.remove(str(DOCS))
    assert beyond_numbers.page_block(beyond_numbers.PAGE.read_text()) == beyond_numbers.findings()


SAMPLE_C = DOCS.parents[1] / "shared" / "data" / "cifar10-subset-c"
WRITTEN_BESIDE = "3a28affb21bf5d30"  # tests/training/kernels.py's fingerprint where the lab-methods record was written


def _close(a, b) -> bool:
    """Equal structure and words, numbers equal to a relative 1e-9."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        return a == pytest.approx(b, rel=1e-9, abs=1e-12)
    return a == b


@pytest.mark.skipif(not (SAMPLE_C / "cifar-10-batches-py").is_dir(), reason="needs ../shared/data/cifar10-subset-c")
def test_the_methods_record_and_table_regenerate_byte_equal_from_the_evidence(tmp_path, monkeypatch):
    """``ladder lab-methods --no-train`` over the committed evidence alone (no store) writes the
    committed record and the entry's table and numbers byte for byte (the figure's pixels
    depend on the plotting library's version, so it is left out)."""
    from click.testing import CliRunner

    from collapse_lab.cli import cli
    from tests.training.kernels import fingerprint

    # the record names the data root and its figures as the command was given them: the same
    # relative paths, from a copy of the repository's layout
    beyond, repo = DOCS / "beyond", tmp_path / "repo"
    shutil.copytree(beyond / "records" / "runs", repo / "docs" / "beyond" / "records" / "runs")
    (tmp_path / "shared").symlink_to(SAMPLE_C.parents[1], target_is_directory=True)
    monkeypatch.chdir(repo)
    res = CliRunner().invoke(cli, ["ladder", "lab-methods", "--seed-base", "2000", "--precision", "fp32", "--store",
                                   str(tmp_path / "store"), "--out", "docs/beyond", "--data-root",
                                   "../shared/data/cifar10-subset-c", "--no-train"])
    assert res.exit_code == 0, res.output
    out = repo / "docs" / "beyond"
    rung = "n300-e10-bn-lr0.01-s3-r30"
    # the float64 measures are sums whose last bit may follow the CPU's kernels: bytes where the
    # kernels are those the record was written beside, else every number to 1e-9 and every word
    same_kernels = fingerprint() == WRITTEN_BESIDE
    for name in (f"records/{rung}--lab-methods.json", f"{rung}/lab-methods.json", f"{rung}/lab-methods.md",
                 "LADDER.md", "ladder.csv"):
        if same_kernels or not name.endswith(".json"):  # the tables print rounded numbers
            assert (out / name).read_bytes() == (beyond / name).read_bytes(), name
        else:
            assert _close(json.loads((out / name).read_text()), json.loads((beyond / name).read_text())), name
    assert not (tmp_path / "store").exists()  # nothing trained, nothing written to the store
