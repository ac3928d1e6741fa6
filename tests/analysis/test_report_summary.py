"""The report opens with the store across its settings: one row per setting named in words,
its seeds, and mean [min, max] of the last round's numbers, computed here by hand."""
from __future__ import annotations

from types import SimpleNamespace

from collapse_lab.analysis.report_runs import summary_section


def _run(alpha: str, seed: int, acc: float):
    meta = {"method": "fedavg", "reg": "none", "beta": 0.1, "alpha": alpha, "seed": seed, "dataset": "cifar10",
            "model": "cnn"}
    return SimpleNamespace(meta=meta, metrics=lambda: [{"event": "round", "round": 1, "test_acc": 0.1},
                                                       {"event": "round", "round": 2, "test_acc": acc}])


def test_one_row_per_setting_with_seed_means_and_ranges():
    runs = [_run("0.01", 0, 0.2), _run("0.01", 1, 0.4), _run("inf", 0, 0.8)]
    nums = [{"effective_rank": 4.0, "dead_units": 2}, {"effective_rank": 6.0, "dead_units": 4},
            {"effective_rank": 20.0, "dead_units": 0}]
    page = summary_section(runs, nums)
    assert "<td>FedAvg, α = 0.01 (cifar10, cnn)</td><td>0, 1</td><td>0.3 [0.2, 0.4]</td><td>5 [4, 6]</td>" \
           "<td>3 [2, 4]</td>" in page
    assert "<td>FedAvg, α = ∞ (cifar10, cnn)</td><td>0</td><td>0.8</td><td>20</td><td>0</td>" in page
    assert "β" not in page and "_s0_" not in page  # readable names: no beta without a regularizer, no hashes
