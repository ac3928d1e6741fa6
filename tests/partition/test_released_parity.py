"""The Dirichlet and IID splits of the released FedDecorr code (MOON's and NIID-Bench's
``partition_data`` draw the same), kept as test vectors in ``tests/vectors/released_partitions``
(README there: how they were produced). ``--partition-option rng=released`` must give
the released clients for the same seed, index set for index set; the toolkit's own stream
(the default) gives other clients, as the issue measured."""
from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pytest

from collapse_lab.config import RunConfig
from collapse_lab.partition import make_partition

V = Path(__file__).resolve().parents[1] / "vectors" / "released_partitions"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "reference" / "released-partitions"
SUMMARY = json.loads((V / "summary.json").read_text())
# the three cases the released procedure needs thousands of redraws for (seconds each)
SLOW = {f"noniid_K20_alpha0.01_seed{s}" for s in range(3)}


class Labels:
    """The 10,000 CIFAR-10 training labels the vectors were drawn on (a stand-in Dataset)."""

    def __init__(self):
        self.train_y = __import__("torch").tensor([int(c) for c in (V / "labels.txt").read_text().strip()])
        self.num_classes, self.train_domain = 10, None


def config(info: dict, stream: str | None) -> RunConfig:
    alpha = math.inf if info["partition"] == "homo" else info["alpha"]
    return RunConfig(dataset="cifar10", alpha=alpha, clients=info["clients"], seed=info["seed"],
                     partition_options={"rng": stream} if stream else {})


def reference_sets(path: Path) -> list[list[int]]:
    idx = json.loads(path.read_text())
    items = sorted(idx.items(), key=lambda kv: int(kv[0])) if isinstance(idx, dict) else enumerate(idx)
    return [sorted(v) for _, v in items]


def test_the_labels_are_the_ones_the_vectors_were_drawn_on():
    y = Labels().train_y.numpy().astype("<i8")
    assert hashlib.sha256(y.tobytes()).hexdigest() == SUMMARY["labels_sha256_int64le"]
    assert y[:10].tolist() == SUMMARY["first_labels"]


CASES = sorted(SUMMARY["files"])


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in CASES])
def test_the_released_stream_gives_the_released_clients(name):
    info = SUMMARY["files"][name]
    part = make_partition(config(info, "released"), Labels())
    counts = np.loadtxt(V / f"{name}_counts.csv", delimiter=",", skiprows=1).astype(np.int64)
    assert np.array_equal(part.counts, counts) and part.sizes.tolist() == info["sizes"]
    for folder in (V, SHARED):  # whole index sets where the vector is kept (all of them in ../shared)
        if (folder / f"{name}_indices.json").is_file():
            assert [ix.tolist() for ix in part.client_indices] == reference_sets(folder / f"{name}_indices.json")


def test_the_own_stream_gives_other_clients_for_the_same_seed():
    """Why the option exists: with the default stream most clients x classes cells differ."""
    info = SUMMARY["files"]["noniid_K10_alpha0.05_seed0"]
    part = make_partition(config(info, None), Labels())
    counts = np.loadtxt(V / "noniid_K10_alpha0.05_seed0_counts.csv", delimiter=",", skiprows=1)
    assert (part.counts != counts).mean() > 0.25


def test_rng_is_an_option_of_the_dirichlet_partition_only():
    from collapse_lab.errors import CollapseLabError
    from collapse_lab.runspec.resolve import resolve_runs

    (cfg,) = resolve_runs({"alpha": ["0.05"], "partition_option": ["rng=released"]})
    assert cfg.partition_options == {"rng": "released"} and cfg.run_name() != resolve_runs({"alpha": ["0.05"]})[0].run_name()
    with pytest.raises(CollapseLabError, match="partition pathological has no such option"):
        resolve_runs({"partition": "pathological", "partition_option": ["rng=released"]})
    with pytest.raises(CollapseLabError, match="use default .* or released"):
        resolve_runs({"alpha": ["0.05"], "partition_option": ["rng=numpy"]})
