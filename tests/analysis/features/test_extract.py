"""Representations: equal to a direct forward pass, and cached by checkpoint content."""
from __future__ import annotations

import numpy as np
import torch

from collapse_lab.analysis.features import FeatureSource
from collapse_lab.analysis.features.extract import extract_features
from collapse_lab.models import build_model
from collapse_lab.partition import Partition
from collapse_lab.store import RunDir
from collapse_lab.config import RunConfig


def make_run(tmp_path, state):
    cfg = RunConfig(dataset="gaussian", model="mlp", dataset_options={"dim": 5, "train_per_class": 6, "test_per_class": 7})
    part = Partition.from_indices([np.arange(60)], np.zeros(60, dtype=np.int64), 10)
    run = RunDir.create(tmp_path, "r", cfg.to_json(), part, state, {})
    run.update(rounds_complete=0)
    return run


def test_batched_extraction_equals_one_pass():
    torch.manual_seed(0)
    m = build_model("resnet20", 10, (3, 8, 8))
    x = torch.randint(0, 255, (37, 3, 8, 8), dtype=torch.uint8)
    f = lambda t, dtype=torch.float32: t.to(dtype) / 255  # noqa: E731
    a = extract_features(m, x, f, torch.float64, "cpu", batch_size=5)
    with torch.no_grad():
        b = m.double().eval()(f(x, torch.float64))[1]
    assert a.dtype == torch.float64 and torch.allclose(a, b, atol=1e-12)


def test_cache_keyed_by_content(tmp_path):
    torch.manual_seed(0)
    model = build_model("mlp", 10, (5,))
    run = make_run(tmp_path, model.state_dict())
    fs = FeatureSource()
    z1 = fs.features(run, 0)
    assert fs.computed == 1 and z1.shape == (70, 128)
    z2 = fs.features(run, 0)
    assert fs.computed == 1 and torch.equal(z1, z2)  # served from the cache
    # new weights in the same file -> a different key -> recomputed
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1)
    run.save_global(0, model.state_dict())
    z3 = fs.features(run, 0)
    assert fs.computed == 2 and not torch.equal(z1, z3)
    # a fresh source (another process, say) reads the same cache
    fs2 = FeatureSource()
    assert torch.equal(fs2.features(run, 0), z3) and fs2.computed == 0
