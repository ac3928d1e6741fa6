"""Every model returns (logits, z) with z the input of its last linear layer."""
from __future__ import annotations

import pytest
import torch

from collapse_lab.errors import CollapseLabError
from collapse_lab.models import MODELS, build_model, check_forward

CASES = [("mlp", (1, 8, 8), 128), ("cnn", (1, 8, 8), 256), ("cnn", (3, 32, 32), 256), ("cnn-bn", (3, 32, 32), 256),
         ("cnn-bn", (1, 8, 8), 256), ("linear", (64,), 64),
         ("mobilenetv2", (3, 32, 32), 1280), ("resnet18", (3, 32, 32), 512), ("resnet18", (3, 64, 64), 512),
         ("resnet20", (3, 32, 32), 64), ("resnet32", (3, 32, 32), 64), ("resnet20-proj", (3, 32, 32), 64),
         ("resnet32-proj", (3, 32, 32), 64),
         ("vgg11", (3, 32, 32), 512), ("vgg11", (1, 8, 8), 512), ("small-cnn", (3, 32, 32), 256),
         ("small-cnn", (3, 96, 96), 256), ("alexnet-bn", (3, 64, 64), 4096), ("resnet50", (3, 32, 32), 2048),
         ("mlpnet", (1, 28, 28), 128)]


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


@pytest.mark.parametrize("name", MODELS.names())
def test_every_registered_model_keeps_the_contract(name):
    """Whatever is registered: (logits, z) with logits = classifier(z), found by the registry."""
    shape = next(s for n, s, _ in CASES if n == name) if name in {n for n, _, _ in CASES} else (3, 32, 32)
    torch.manual_seed(0)
    m = build_model(name, 5, shape).eval()
    check_forward(name, m, shape, 5)
    logits, z = m(torch.randn(2, *shape))
    assert torch.allclose(logits, m.classifier(z), atol=1e-6)
    assert name in {n for n, _, _ in CASES}  # and its representation width is pinned above


def test_unknown_model_options_are_refused_with_the_list():
    with pytest.raises(CollapseLabError, match="model mobilenetv2 has no option width; its options: none"):
        build_model("mobilenetv2", 10, (3, 32, 32), width=8)
    with pytest.raises(CollapseLabError, match="model cnn has no option widht; its options: width, feature_dim"):
        build_model("cnn", 10, (3, 32, 32), widht=8)
    assert build_model("cnn", 10, (3, 32, 32), width=8, feature_dim=16).feature_dim == 16


def test_a_model_that_breaks_the_contract_is_refused():
    import torch.nn as nn

    from collapse_lab.registry import Registry

    with pytest.raises(TypeError, match="takes \\*\\*kwargs"):
        MODELS.register("sloppy")(lambda num_classes, input_shape, **_: None)
    reg = Registry("model")
    reg.register("nofeat")(lambda num_classes, input_shape: nn.Linear(3, num_classes))
    MODELS._items["nofeat"] = reg.get("nofeat")  # bypass discovery for this check only
    try:
        with pytest.raises(TypeError, match="breaks the model contract"):
            build_model("nofeat", 4, (3,))
    finally:
        del MODELS._items["nofeat"]
    with pytest.raises(CollapseLabError, match="--model mlp cannot take inputs of shape"):
        check_forward("mlp", build_model("mlp", 4, (1, 8, 8)), (1, 9, 9), 4)


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


def _params(m):
    return sum(p.numel() for p in m.parameters())


def test_the_papers_backbones_have_their_published_sizes():
    """Parameter counts by hand from the layer lists (10 classes)."""
    conv = lambda cin, cout, k, bias=True: cin * cout * k * k + (cout if bias else 0)  # noqa: E731
    # VGG-11 configuration A: eight 3x3 convolutions, a bias-free 512 -> 10 classifier
    vgg = (conv(3, 64, 3) + conv(64, 128, 3) + conv(128, 256, 3) + conv(256, 256, 3) + conv(256, 512, 3)
           + 3 * conv(512, 512, 3) + 512 * 10)
    assert _params(build_model("vgg11", 10, (3, 32, 32))) == vgg == 9_225_600
    # torchvision's resnet50 (25,557,032 with a 7x7 stem and 1000 classes), with a 3x3 stem and 10 classes
    assert _params(build_model("resnet50", 10, (3, 32, 32))) == 25_557_032 - 3 * 64 * 49 + 3 * 64 * 9 - 2048 * 990 - 990
    # FedBN's AlexNet: five conv+BN, two fc+BN of 4096, the classifier
    alex = (conv(3, 64, 11) + conv(64, 192, 5) + conv(192, 384, 3) + conv(384, 256, 3) + conv(256, 256, 3)
            + 2 * (64 + 192 + 384 + 256 + 256) + 9216 * 4096 + 4096 + 4096 * 4096 + 4096 + 4 * 4096 + 4096 * 10 + 10)
    assert _params(build_model("alexnet-bn", 10, (3, 64, 64))) == alex
    # FedUV's Small CNN: bias-free convolutions and hidden layers, each with BatchNorm
    small = (conv(3, 64, 3, False) + conv(64, 64, 1, False) + conv(64, 128, 3, False) + conv(128, 128, 3, False)
             + conv(128, 128, 1, False) + conv(128, 256, 3, False) + conv(256, 256, 3, False) + conv(256, 256, 1, False)
             + 2 * (64 * 2 + 128 * 3 + 256 * 3) + 2 * (256 * 256 + 2 * 256) + 256 * 10 + 10)
    assert _params(build_model("small-cnn", 10, (3, 32, 32))) == small
    # FedRS's MLPNet on 28x28 FEMNIST
    assert _params(build_model("mlpnet", 62, (1, 28, 28))) == 784 * 1024 + 1024 + 1024 * 1024 + 1024 + 1024 * 128 + 128 + 128 * 62


def _released_cifar_resnet_shapes(blocks: int, num_classes: int = 10) -> list[tuple]:
    """The state shapes, in order, of the released FedDecorr code's ``resnet20``/``resnet32``
    (networks/resnetcifar.py: a 3x3 stem, three stages of ``blocks`` basic blocks of 16, 32,
    64 channels, option-A shortcuts without parameters, a 64 -> classes linear layer),
    written out from its layer list; each BatchNorm holds weight, bias, running mean and
    variance and the batch counter."""
    bn = lambda c: [(c,), (c,), (c,), (c,), ()]  # noqa: E731
    shapes = [(16, 3, 3, 3), *bn(16)]
    cin = 16
    for cout in (16, 32, 64):
        for _ in range(blocks):
            shapes += [(cout, cin, 3, 3), *bn(cout), (cout, cout, 3, 3), *bn(cout)]
            cin = cout
    return shapes + [(num_classes, 64), (num_classes,)]


@pytest.mark.parametrize("name,blocks,params", [("resnet20", 3, 269_722), ("resnet32", 5, 464_154)])
def test_cifar_resnets_are_the_released_networks(name, blocks, params):
    """Parameter count (the released code's, as printed by it: 269,722 and 464,154) and
    every state tensor's shape in order; the first revision (projection shortcuts) stays
    as ``<name>-proj`` and is what a run stored with revision 1 builds."""
    from collapse_lab.config import RunConfig
    from collapse_lab.models import builder
    from collapse_lab.runspec.resolve import check_config

    m = build_model(name, 10, (3, 32, 32))
    assert _params(m) == params
    assert [tuple(t.shape) for t in m.state_dict().values()] == _released_cifar_resnet_shapes(blocks)
    old = build_model(f"{name}-proj", 10, (3, 32, 32))
    assert _params(old) - params == (16 * 32 + 2 * 32) + (32 * 64 + 2 * 64) == 2_752  # two 1x1 projections + BN
    # the shortcut subsamples and zero-pads: a block's output depends on its input only through
    # stride-2 pixels on the identity path (checked on the first downsampling block)
    block = m.layers[blocks]
    x = torch.randn(2, 16, 8, 8)
    got = block.shortcut(x)
    assert got.shape == (2, 32, 4, 4) and torch.equal(got[:, 8:24], x[:, :, ::2, ::2])
    assert got[:, :8].abs().sum() == 0 and got[:, 24:].abs().sum() == 0
    # runs stored before keep loading what they trained; new runs record the new revision
    stored = RunConfig.from_json({**RunConfig(model=name).to_json(), "model_revision": 1})
    legacy = {k: v for k, v in RunConfig(model=name).to_json().items() if k != "model_revision"}
    assert builder(name, RunConfig.from_json(legacy).model_revision) == f"{name}-proj"
    assert builder(name, stored.model_revision) == f"{name}-proj"
    new = check_config(RunConfig(model=name, dataset="cifar10"))
    assert new.model_revision == 2 and builder(name, 2) == name
    assert new.run_name() != RunConfig.from_json({**new.to_json(), "model_revision": 1}).run_name()


def test_cnn_bn_is_the_cnn_with_batchnorm_before_each_relu():
    """cnn-bn (docs/scale.md's BatchNorm rung): the plain network's layers, a BatchNorm before
    every ReLU (the last one right before z, as in MobileNetV2 and ResNet), no bias where a
    BatchNorm follows; the plain cnn's state keys are unchanged (stored runs load)."""
    import torch.nn as nn

    plain, bn = build_model("cnn", 10, (3, 32, 32)), build_model("cnn-bn", 10, (3, 32, 32))
    assert list(plain.state_dict()) == ["features.0.weight", "features.0.bias", "features.3.weight",
                                        "features.3.bias", "head.0.weight", "head.0.bias", "classifier.weight",
                                        "classifier.bias"]
    mods = [m for m in bn.modules() if not isinstance(m, (nn.Sequential, type(bn)))]
    relus = [i for i, m in enumerate(mods) if isinstance(m, nn.ReLU)]
    assert len(relus) == 3 and all(isinstance(mods[i - 1], (nn.BatchNorm2d, nn.BatchNorm1d)) for i in relus)
    assert all(m.bias is None for m in (bn.features[0], bn.features[4], bn.head[0]))
    # in training mode each of z's units is normalised over the batch before the ReLU
    torch.manual_seed(0)
    bn.train()
    pre = {}
    bn.head[1].register_forward_hook(lambda m, i, o: pre.setdefault("z", o.detach()))
    bn(torch.randn(64, 3, 32, 32))
    assert torch.allclose(pre["z"].mean(0), torch.zeros(256), atol=1e-5)
    assert torch.allclose(pre["z"].var(0, unbiased=False), torch.ones(256), atol=1e-3)
