"""collapse-lab report: one self-contained page whose numbers are the analysis commands',
checked in a real headless browser (Chromium from the system packages) when one is there."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from tests.commands.test_spectrum_cli import invoke

BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")


def _report(store, tmp_path, figures=None):
    out = tmp_path / "report.html"
    # an explicit figures folder: the default (./figures) holds whatever the user rendered
    args = ["report", "--store", str(store), "--html", str(out), "--json", "--figures",
            str(figures or tmp_path / "no-figures")]
    res = invoke(*args)
    assert res.exit_code == 0, res.output
    return out, json.loads(res.stdout)


@pytest.mark.slow  # renders a page of figures (3 s)
def test_the_report_is_self_contained_and_carries_the_analysis_numbers(store, tmp_path):
    figs = tmp_path / "figs"
    assert invoke("spectrum", "--store", str(store), "--alpha", "inf", "--out", str(figs)).exit_code == 0
    (figs / "claims-quick.json").write_text(json.dumps([{"entry": "x-fig1", "claims": [
        {"text": "a > b", "check": "x", "measured": "2 > 1", "holds": True}]}]))
    out, rep = _report(store, tmp_path, figs)
    page = out.read_text()
    assert len(rep["runs"]) == 3 and rep["bytes"] == out.stat().st_size
    # every image is embedded; nothing is fetched
    srcs = re.findall(r"src='([^']*)'", page)
    assert len(srcs) == 3 + 1 and all(s.startswith("data:image/png;base64,") for s in srcs)
    assert not re.search(r"(src|href)=['\"]?(https?:|//|file:)", page)
    assert "<td>x-fig1</td><td>a &gt; b</td>" in page
    claims = page.split("<h2>Claims</h2>", 1)[1].split("</table>", 1)[0]
    head, first = claims.split("</tr>")[:2]  # a heading for every column, the verdict named as such
    assert head.count("<th>") == first.count("<td>") == 6 and "<th>verdict</th><th>preset</th>" in head
    # the page's numbers are the spectrum command's
    spec = json.loads(invoke("spectrum", "--store", str(store), "--out", str(tmp_path / "s"), "--json").stdout)
    glob = {e["run"]: e for e in spec["spectra"] if e["model"] == "global"}
    for r in rep["runs"]:
        g = glob[r["run"]]
        assert (r["dead_units"], r["n_significant"]) == (g["dead_units"], g["n_significant"])
        assert r["rankme"] == pytest.approx(g["rankme"]) and r["stable_rank"] == pytest.approx(g["stable_rank"])
        assert {str(k) for k in r["cka_with_global"]} == {"0", "1", "2", "3"}  # the four clients of the last round
    # each run's layers are the layers command's (global model, last round: layers draws every round by default)
    lay = json.loads(invoke("layers", "--store", str(store), "--out", str(tmp_path / "l"), "--json").stdout)["layers"]
    last = {r: max(e["round"] for e in lay if e["run"] == r) for r in {e["run"] for e in lay}}
    for r in rep["runs"]:
        want = [{k: v for k, v in e.items() if k not in ("run", "group", "alpha", "reg", "round", "model")}
                for e in lay if e["run"] == r["run"] and e["model"] == "global" and e["round"] == last[r["run"]]]
        assert r["layers"] == want and want[-1]["layer"] == "z"
    res = invoke("report", "--store", str(tmp_path / "empty"), "--html", str(tmp_path / "x.html"))
    assert res.exit_code == 2 and not (tmp_path / "x.html").exists()


@pytest.mark.slow  # starts a browser
@pytest.mark.skipif(not any(shutil.which(b) for b in BROWSERS), reason="no Chromium here (apt-get install "
                                                                       "chromium-headless-shell)")
def test_the_report_loads_in_a_headless_browser_with_every_image(store, tmp_path):
    out, rep = _report(store, tmp_path)
    browser = next(shutil.which(b) for b in BROWSERS if shutil.which(b))
    flags = ["--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000"]
    dom = subprocess.run([browser, *flags, "--dump-dom", out.as_uri()], capture_output=True, text=True, timeout=120).stdout
    body = re.search(r"<body([^>]*)>", dom).group(1)
    attrs = dict(re.findall(r'data-([a-z-]+)="(\d+)"', body))
    assert attrs == {"images": "3", "images-ok": "3", "errors": "0"}, body
    shot = tmp_path / "shot.png"
    subprocess.run([browser, *flags, "--window-size=1400,2000", f"--screenshot={shot}", out.as_uri()],
                   capture_output=True, timeout=120)
    assert shot.stat().st_size > 20_000
