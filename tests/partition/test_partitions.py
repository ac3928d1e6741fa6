"""Partitions: sizes, disjointness, determinism, balance, skew, classes per client."""
from __future__ import annotations

import math

import numpy as np
import pytest

from collapse_lab.errors import CollapseLabError
from collapse_lab.partition import PARTITIONS, Partition, label_entropy

dirichlet = PARTITIONS.get("dirichlet")
pathological = PARTITIONS.get("pathological")
domain = PARTITIONS.get("domain")


def labels_fixture(n_per_class=100, classes=10):
    return np.repeat(np.arange(classes), n_per_class)


def check_disjoint_cover(p: Partition, n: int, labels: np.ndarray, classes: int):
    allix = np.concatenate(p.client_indices)
    assert p.sizes.sum() == n == len(allix)
    assert len(np.unique(allix)) == n  # disjoint and covering
    # counts matrix recomputed independently
    for k, ix in enumerate(p.client_indices):
        assert np.array_equal(p.counts[k], np.bincount(labels[ix], minlength=classes))


@pytest.mark.parametrize("alpha", [0.01, 0.1, 1.0, math.inf])
def test_dirichlet_sizes_disjoint(alpha):
    y = labels_fixture()
    p = dirichlet(y, 10, 10, np.random.default_rng(3), alpha=alpha, min_size=10)
    check_disjoint_cover(p, len(y), y, 10)
    assert p.sizes.min() >= 10


def test_same_seed_same_partition_other_seed_differs():
    y = labels_fixture()
    a = dirichlet(y, 10, 10, np.random.default_rng(7), alpha=0.1)
    b = dirichlet(y, 10, 10, np.random.default_rng(7), alpha=0.1)
    c = dirichlet(y, 10, 10, np.random.default_rng(8), alpha=0.1)
    assert a.content_hash() == b.content_hash() != c.content_hash()
    assert all(np.array_equal(u, v) for u, v in zip(a.client_indices, b.client_indices))


def test_iid_balanced():
    y = labels_fixture(n_per_class=101)  # 1010 samples over 10 clients -> 101 each
    p = dirichlet(y, 10, 10, np.random.default_rng(0), alpha=math.inf)
    assert p.sizes.tolist() == [101] * 10
    y = labels_fixture(n_per_class=7, classes=3)  # 21 over 4 -> 6,5,5,5
    p = dirichlet(y, 3, 4, np.random.default_rng(0), alpha=math.inf, min_size=1)
    assert sorted(p.sizes.tolist()) == [5, 5, 5, 6]


def test_entropy_falls_with_alpha():
    y = labels_fixture()
    means = []
    for alpha in (math.inf, 1.0, 0.25, 0.05, 0.01):
        ent = [label_entropy(dirichlet(y, 10, 10, np.random.default_rng(s), alpha=alpha).counts).mean() for s in range(5)]
        means.append(np.mean(ent))
    assert all(a > b for a, b in zip(means, means[1:])), means
    assert means[0] > 0.95 * math.log(10)  # IID: near the uniform entropy log C


def test_cap_at_n_over_k():
    """A client that already holds >= N/K samples gets no share of later classes."""
    y = labels_fixture(n_per_class=50, classes=20)
    n, k = len(y), 10
    p = dirichlet(y, 20, k, np.random.default_rng(1), alpha=0.05)
    # Before the last class it received, a client held < N/K; so its final size is
    # below N/K plus the size of one class.
    assert p.sizes.max() < n / k + 50


def test_dirichlet_impossible_is_an_error_not_a_hang(monkeypatch):
    import collapse_lab.partition.dirichlet as D

    monkeypatch.setattr(D, "MAX_ATTEMPTS", 1000)  # the limit, not its size, is what this checks
    y = labels_fixture(n_per_class=10, classes=2)
    with pytest.raises(CollapseLabError, match="min-size"):
        dirichlet(y, 2, 10, np.random.default_rng(0), alpha=0.01, min_size=2)
    with pytest.raises(CollapseLabError, match="alpha"):
        dirichlet(y, 2, 2, np.random.default_rng(0), alpha=0.0)


@pytest.mark.parametrize("m,clients", [(1, 10), (2, 10), (3, 7), (10, 4)])
def test_pathological_exactly_m_classes(m, clients):
    y = labels_fixture(n_per_class=60)
    p = pathological(y, 10, clients, np.random.default_rng(m), classes_per_client=m)
    check_disjoint_cover(p, len(y), y, 10)
    assert ((p.counts > 0).sum(axis=1) == m).all()
    assert ((p.counts > 0).sum(axis=0) >= 1).all()  # every class held
    for c in range(10):  # each class split evenly among its holders
        held = p.counts[:, c][p.counts[:, c] > 0]
        assert held.max() - held.min() <= 1


def test_pathological_bad_m():
    y = labels_fixture()
    with pytest.raises(CollapseLabError):
        pathological(y, 10, 3, np.random.default_rng(0), classes_per_client=2)  # 6 < 10 classes
    with pytest.raises(CollapseLabError):
        pathological(y, 10, 10, np.random.default_rng(0), classes_per_client=11)


def test_domain_one_per_client():
    y = np.array([0, 1, 0, 1, 1, 0])
    dom = np.array([0, 0, 1, 1, 2, 2])
    p = domain(y, 2, 3, np.random.default_rng(0), domains=dom)
    assert [ix.tolist() for ix in p.client_indices] == [[0, 1], [2, 3], [4, 5]]
    with pytest.raises(CollapseLabError, match="--clients 3"):
        domain(y, 2, 2, np.random.default_rng(0), domains=dom)


def test_save_load_hash(tmp_path):
    y = labels_fixture()
    p = dirichlet(y, 10, 10, np.random.default_rng(0), alpha=0.1)
    p.save(tmp_path / "p.safetensors")
    q = Partition.load(tmp_path / "p.safetensors")
    assert q.content_hash() == p.content_hash() and np.array_equal(q.counts, p.counts)


def test_partition_ignores_global_random_state_and_is_pinned():
    """Same seed, same partition, whatever the global numpy/torch/random state; the hashes
    are pinned so a change of platform or library that moves a partition is caught."""
    import random

    import torch

    from collapse_lab.config import RunConfig
    from collapse_lab.data import load_dataset
    from collapse_lab.training.prepare import make_partition

    ds = load_dataset("digits")
    pinned = {0.05: ("a1508bc205238ee8", [148, 228, 147, 211, 228, 36, 138, 148, 113, 40]),
              float("inf"): ("94e3e0e6bce7d217", [144] * 7 + [143] * 3)}
    for alpha, (h, sizes) in pinned.items():
        hashes = set()
        for s in (1, 2):
            np.random.seed(s)
            torch.manual_seed(s)
            random.seed(s)
            np.random.rand(s)
            part = make_partition(RunConfig(alpha=alpha), ds)
            hashes.add(part.content_hash())
            assert part.sizes.tolist() == sizes
        assert len(hashes) == 1 and hashes.pop().startswith(h)


def test_a_partition_is_handed_only_its_own_options_and_refuses_others():
    from collapse_lab.errors import CollapseLabError
    from collapse_lab.partition import PARTITIONS, partition_options

    assert partition_options("dirichlet") == ["alpha", "min_size"]
    assert partition_options("pathological") == ["classes_per_client"]
    assert partition_options("domain") == ["domains"]
    labels = np.arange(40) % 4
    with pytest.raises(CollapseLabError, match="partition dirichlet has no option classes_per_client; its options: "
                                               "alpha, min_size"):
        PARTITIONS.call("dirichlet", labels, 4, 2, np.random.default_rng(0), classes_per_client=2)
    part = PARTITIONS.call("pathological", labels, 4, 2, np.random.default_rng(0), classes_per_client=2)
    assert (np.count_nonzero(part.counts, axis=1) == 2).all()


# -- FedRS's label scenes --------------------------------------------------------------


def _scenes(labels, C, K, M, seed=0):
    return PARTITIONS.call("scenes", labels, C, K, np.random.default_rng(seed), classes_per_client=M)


@pytest.mark.parametrize("C,K,M,per_class,share", [(10, 100, 2, 5000, 250), (10, 100, 5, 5000, 100),
                                                    (100, 100, 20, 500, 25)])
def test_scenes_give_every_client_m_classes_with_equal_shares(C, K, M, per_class, share):
    """FedETF's three scenes at CIFAR's sizes: 250 / 100 / 25 samples per (client, class)."""
    labels = np.repeat(np.arange(C), per_class)
    p = _scenes(labels, C, K, M)
    held = (p.counts > 0).sum(1)
    # a chunk straddling two permutations may repeat a class: that client then holds fewer
    # distinct classes, with a double share of the repeated one
    assert (p.counts.sum(1) == M * share).all() and (held <= M).all() and (held >= M - 1).all()
    assert set(np.unique(p.counts[p.counts > 0])) <= {share, 2 * share}
    everything = np.concatenate(p.client_indices)
    assert len(everything) == len(set(everything.tolist()))  # disjoint
    assert (p.counts.sum(0) == per_class).all()  # K M / C slots per class: nothing left over


def test_scenes_follow_the_released_codes_assignment_by_hand():
    """K permutations of the classes, cut into chunks of M; class c split over its slots."""
    C, K, M = 4, 3, 3
    labels = np.repeat(np.arange(C), 6)
    rng = np.random.default_rng(7)
    seq = np.concatenate([rng.permutation(C) for _ in range(K)])
    chunks = [list(seq[k * M:(k + 1) * M]) for k in range(K)]
    slots = np.bincount(seq[:K * M], minlength=C)
    p = _scenes(labels, C, K, M, seed=7)
    for k in range(K):
        for c in range(C):
            assert p.counts[k, c] == chunks[k].count(c) * (6 // slots[c]), (k, c)


def test_scenes_refuse_too_few_classes_or_samples():
    with pytest.raises(CollapseLabError, match="cannot cover 10 classes"):
        _scenes(np.repeat(np.arange(10), 5), 10, 3, 2)
    with pytest.raises(CollapseLabError, match="samples for"):
        _scenes(np.repeat(np.arange(10), 2), 10, 100, 2)
