"""Every model returns (logits, z) with z the input of its last linear layer."""
from __future__ import annotations

import pytest
import torch

from collapse_lab.models import MODELS, build_model

CASES = [("mlp", (1, 8, 8), 128), ("cnn", (1, 8, 8), 256), ("cnn", (3, 32, 32), 256), ("linear", (64,), 64),
         ("mobilenetv2", (3, 32, 32), 1280), ("resnet18", (3, 32, 32), 512), ("resnet18", (3, 64, 64), 512),
         ("resnet20", (3, 32, 32), 64), ("resnet32", (3, 32, 32), 64)]


@pytest.mark.parametrize("name,shape,dim", CASES)
def test_logits_are_classifier_of_z(name, shape, dim):
    torch.manual_seed(0)
    m = build_model(name, 7, shape).eval()
    x = torch.randn(3, *shape)
    logits, z = m(x)
    assert z.shape == (3, dim) and logits.shape == (3, 7) and m.feature_dim == dim
    assert torch.allclose(logits, m.classifier(z), atol=1e-6)
    # the classifier is the last linear layer: registered last among the model's modules
    assert list(m.modules())[-1] is m.classifier


def test_mlp_representation_is_wide_enough():
    assert build_model("mlp", 10, (1, 8, 8)).feature_dim >= 64


def test_linear_network_is_the_weight_product():
    torch.manual_seed(0)
    m = build_model("linear", 5, (12,), depth=3, width=6)
    x = torch.randn(4, 12, dtype=torch.float64)
    m = m.double()
    prod = torch.eye(12, dtype=torch.float64)
    for layer in m.layers:
        prod = layer.weight @ prod  # Pi = W_L ... W_1
    logits, z = m(x)
    assert torch.allclose(z, x @ prod.T) and torch.allclose(logits, z @ m.classifier.weight.T)
    assert all(layer.bias is None for layer in m.layers) and m.classifier.bias is None


def test_registry_names():
    assert MODELS.names() == ["cnn", "linear", "mlp", "mobilenetv2", "resnet18", "resnet20", "resnet32"]
