"""Tables: every spec's cells are the paper's printed cells in their order; a computed cell
is the mean over seeds of what the stored checkpoints give (numpy, independently); the
derived rows are differences; the formats bold the best value, carry the paper's number
and the gap, and trace each cell to its runs."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from collapse_lab.analysis import RENDERERS
from collapse_lab.analysis.catalogue import SPECS, Entry, catalogue
from collapse_lab.plan import context
from collapse_lab.analysis.renderers import table as T
from collapse_lab.analysis.renderers.table_format import render_all
from tests.analyses.conftest import TINY
from tests.analyses.test_catalogue import numpy_accuracy


def test_every_table_spec_holds_the_papers_printed_cells_in_order():
    tables = catalogue("table")
    assert len(tables) == 31
    ref = pd.read_csv(SPECS.parent / "reference" / "all_tables_long.csv")
    seen = set()
    for e in tables:
        if e.not_rendered:
            continue
        r = ref[ref.table == e.params["reference"]]
        assert list(r.column.astype(str)) == [c["column"] for c in e.params["cells"]], e.name
        seen.add(e.params["reference"])
        for c in e.params["cells"]:
            for preset in ("quick", "paper"):
                assert isinstance(c[preset], dict) and c[preset], (e.name, c)
    assert seen == set(ref.table)  # every printed table has its spec


def _entry(monkeypatch, cells):
    for c in cells:  # the key each cell finds its printed number by (analysis/table_spec.py)
        c.update(setting=c["column"], ref=[c["method"], "none"])
    rows = [{"table": "t", "method": c["method"], "regularizer": "none", "column": c["column"], "setting": c["column"],
             "value_mean": c.pop("paper"), "value_std": 0.5, "bold_in_source": 0} for c in cells][::-1]  # any order
    monkeypatch.setattr(T, "reference", lambda table: pd.DataFrame(rows))
    return Entry("test-table", "test", "Table 0", "table", "test", "table",
                 {"quick": {"base": {k: v for k, v in TINY.items()}, "seeds": [0, 1]}},
                 {"reference": "t", "metric": "final", "cells": cells})


@pytest.mark.precision("fp32")  # compares with fp32 numbers, run names or round-off
def test_a_cell_is_the_mean_over_seeds_of_the_stored_models_accuracy(store, monkeypatch):
    cells = [{"row": "FedAvg", "method": "FedAvg", "variant": "", "column": "a=0.1", "quick": {"alpha": 0.1},
              "paper": 50.0},
             {"row": "FedAvg", "method": "FedAvg", "variant": "", "column": "a=inf", "quick": {"alpha": "inf"},
              "paper": 60.0},
             {"row": "MOON", "method": "MOON", "variant": "", "column": "a=0.1",
              "quick": {"not_available": "needs moon here"}, "paper": 40.0},
             {"row": "MOON", "method": "MOON", "variant": "", "column": "a=inf",
              "quick": {"not_available": "needs moon here"}, "paper": 45.0}]
    e = _entry(monkeypatch, cells)
    values = RENDERERS.get("table").compute(e, context(store, "quick"))
    for c in values["cells"][:2]:
        accs = [numpy_accuracy(store / name) for name in c["runs"]]
        assert len(accs) == 2 and c["ours_mean"] == pytest.approx(np.mean(accs)) and c["values"] == pytest.approx(accs)
    text = render_all(values, e, compare=True)
    best = max(values["cells"][:2], key=lambda c: c["ours_mean"])
    assert f"**{best['ours_mean']:.2f} ± {best['ours_std']:.2f}**" in text["md"]
    assert f"(paper 50.00 ± 0.50; Δ {values['cells'][0]['ours_mean'] - 50:+.2f})" in text["md"]
    assert "- MOON: needs moon here" in text["md"]
    assert values["cells"][0]["runs"][0] in text["csv"] and "\\toprule" in text["tex"]


def test_derived_rows_are_differences_of_their_rows():
    def cell(row, method, variant, col, ours, paper):
        return {"row": row, "method": method, "variant": variant, "column": col, "ours_mean": ours, "ours_std": None,
                "paper_mean": paper, "paper_std": None, "paper_bold": False, "n": 3, "runs": [row], "values": [],
                "not_available": None, "data": "digits"}

    cells = [cell("FedAvg", "FedAvg", "", "x", 70.0, 64.0), cell("FedAvg + FedDecorr", "FedAvg", "feddecorr", "x",
                                                                   72.5, 66.5),
             cell("MOON base", "MOON", "base", "x", 60.0, 69.5), cell("MOON +ETF", "MOON", "+ETF", "x", 61.0, 70.5),
             cell("MOON improvement", "MOON", "improvement", "x", None, 1.0)]
    cells[-1]["not_available"] = "derived"
    out = T._derived(cells, [c["row"] for c in cells])
    (d,) = [c for c in out if c["row"] == "FedAvg Δ FedDecorr"]
    assert d["ours_mean"] == pytest.approx(2.5) and d["paper_mean"] == pytest.approx(2.5)
    assert cells[-1]["ours_mean"] == pytest.approx(1.0) and cells[-1]["paper_mean"] == 1.0  # filled in place


def test_one_resolver_decides_the_record_the_store_and_the_analyses_use(tmp_path):
    """Values filled in from defaults and from the data set (structured-decov's groups,
    FedProx's mu, FedUV's lambda, one client per domain) are decided once, by the resolver:
    the catalogue's expansion, ``train``'s resolution and the folder ``prepare`` picks agree,
    and ``prepare`` leaves the record as it is."""
    from collapse_lab.runspec.resolve import resolve_runs
    from collapse_lab.runspec.expand import expand
    from collapse_lab.training.prepare import prepare

    for opts, filled in (({"reg": "structured-decov"}, ("reg_options", "groups")),
                         ({"method": "fedprox"}, ("method_options", "mu")),
                         ({"reg": "feduv", "beta": 1.0}, ("reg_options", "lam")),
                         ({"dataset": "digits-domains", "model": "cnn", "partition": "domain", "clients": 0},
                          ("clients", None))):
        opts = {**opts, "rounds": 2, "alpha": 0.5} if opts.get("partition") != "domain" else {**opts, "rounds": 2}
        (cfg,) = resolve_runs({}, values=opts)
        (planned,) = expand({"base": opts}, "test", data="if-present")
        (p,) = prepare([cfg], tmp_path)
        assert planned == cfg and p.config == cfg and p.path.name == cfg.run_name()
        field, key = filled
        assert (getattr(cfg, field) > 0) if key is None else (key in getattr(cfg, field)), (opts, cfg)


class _Run:
    def __init__(self, accs, domains=None, dom_acc=None):
        self.meta = {"domains": domains} if domains else {}
        self.path = __import__("pathlib").Path("fake-run")
        self._m = [{"event": "round", "round": r, "test_acc": a, **({"domain_test_acc": dom_acc} if dom_acc else {})}
                   for r, a in enumerate(accs)]

    def metrics(self):
        return self._m


def test_mean_last_and_domain_metrics_by_hand():
    from collapse_lab.errors import CollapseLabError

    run = _Run([0.1] + [0.01 * k for k in range(1, 21)])  # rounds 1..20 at 1..20 %
    assert T.run_value(run, "mean_last:5") == pytest.approx(np.mean([16, 17, 18, 19, 20]))
    assert T.run_value(run, "mean_last:10%") == pytest.approx(np.mean([19, 20]))  # 10 % of 20 rounds
    assert T.run_value(run, "final") == pytest.approx(20.0)
    with pytest.raises(CollapseLabError, match="the run has 20 rounds"):
        T.run_value(run, "mean_last:50")
    assert T.metric_of({"metric": {"quick": "final", "paper": "mean_last:50"}}, "paper") == "mean_last:50"
    # a smoke run (one round) averages the rounds it has: FedETF's tables rendered nowhere at --smoke
    smoke = _Run([0.1, 0.37])
    smoke.meta["smoke"] = True
    assert T.run_value(smoke, "mean_last:50") == pytest.approx(37.0)
    run = _Run([0.5, 0.6], ["amazon", "caltech", "dslr"], [0.5, None, 0.8])
    assert T.run_value(run, "domain_acc:dslr") == pytest.approx(80.0)
    assert T.run_value(run, "domain_acc:avg") == pytest.approx(65.0)  # domains with test samples
    with pytest.raises(CollapseLabError, match="no test samples of domain 'caltech'"):
        T.run_value(run, "domain_acc:caltech")
    with pytest.raises(CollapseLabError, match="no per-domain accuracy"):
        T.run_value(_Run([0.5, 0.6]), "domain_acc:avg")
