"""Per-layer spectra (issue 50 items 1 and 5): the streamed float64 covariance equals the
two-pass one, and every layer's spectrum equals a hand-written forward-hook extraction in
float64 (numpy's covariance of the globally average-pooled maps); bad requests are one line."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn

from collapse_lab.layerwise import Z, default_layers, layer_spectra
from collapse_lab.errors import CollapseLabError
from collapse_lab.models import MODELS
from collapse_lab.spectra.streaming import StreamingCovariance


def _eig_desc(cov: np.ndarray) -> np.ndarray:
    return np.clip(np.linalg.eigvalsh((cov + cov.T) / 2)[::-1], 0, None)


def test_streamed_covariance_equals_the_two_pass_one_far_from_the_origin():
    """Uneven batches of rows whose mean is 1e6 times their spread: the merged scatter equals
    numpy's float64 covariance (1/N) to round-off of the spread, not of the mean."""
    rng = np.random.default_rng(0)
    z = rng.normal(size=(257, 6)) @ rng.normal(size=(6, 6)) + 1e6
    acc = StreamingCovariance(6)
    for a, b in ((0, 1), (1, 100), (100, 101), (101, 257)):
        acc.add(torch.from_numpy(z[a:b]).float().double())  # float32 -> float64 inputs are fine too
    acc2 = StreamingCovariance(6)
    acc2.add(torch.from_numpy(z))
    ref = np.cov(z, rowvar=False, bias=True)
    assert np.allclose(acc2.covariance().numpy(), ref, rtol=1e-9, atol=1e-9 * np.abs(ref).max())
    sv, floor = acc2.spectrum()
    assert np.allclose(sv.numpy(), _eig_desc(ref), rtol=1e-8, atol=floor)
    assert acc.n == 257


def _hand(model: nn.Module, x: torch.Tensor, names: list[str]) -> dict[str, np.ndarray]:
    """The reference: each named module's output (z: the classifier's input) taken by a hook
    of this test on the float64 model, pooled over positions by hand, covariance by numpy."""
    m = model.double().eval()
    got: dict[str, list] = {n: [] for n in names}
    mods = dict(m.named_modules())
    hs = []
    for n in names:
        if n == Z:
            last = [mod for mod in m.modules() if isinstance(mod, nn.Linear)][-1]  # the classifier
            hs.append(last.register_forward_pre_hook(lambda mod, a, n=n: got[n].append(a[0].numpy().copy())))
        else:
            hs.append(mods[n].register_forward_hook(lambda mod, a, o, n=n: got[n].append(o.numpy().copy())))
    with torch.no_grad():
        m(x.double())
    for h in hs:
        h.remove()
    out = {}
    for n, parts in got.items():
        t = np.concatenate(parts)
        t = t.reshape(t.shape[0], t.shape[1], -1).mean(2) if t.ndim >= 3 else t
        out[n] = _eig_desc(np.cov(t, rowvar=False, bias=True))
    return out


@pytest.mark.parametrize("model", ["cnn", "cnn-bn", "resnet20"])
def test_every_layer_equals_a_hand_written_float64_extraction(model):
    torch.manual_seed(0)
    net = MODELS.call(model, 10, (3, 8, 8))
    x = torch.randn(70, 3, 8, 8)
    names = default_layers(net)
    assert names[-1] == Z and len(names) >= 3
    got = layer_spectra(net, x, batch_size=16)  # batches of 16, 16, 16, 16, 6
    ref = _hand(net, x, names)
    # a default stage whose output is z (the CNNs' last activation, ResNet's last block after
    # pooling) is read once, as z; named on request, it is read
    dropped = [n for n in names if n not in got]
    assert list(got) == [n for n in names if n not in dropped] and len(dropped) == 1
    assert np.allclose(ref[dropped[0]], ref[Z], rtol=1e-12, atol=1e-300)
    assert list(layer_spectra(net, x, names, batch_size=16)) == names
    for n in got:
        sv, floor, width = got[n]
        assert width == len(ref[n]) and np.allclose(sv.numpy(), ref[n], rtol=1e-9, atol=max(floor, 1e-300)), n


def test_bad_requests_are_one_line():
    net = MODELS.call("cnn", 10, (3, 8, 8))
    x = torch.randn(4, 3, 8, 8)
    with pytest.raises(CollapseLabError, match="--layer 'features.99': .*no such module"):
        layer_spectra(net, x, ["features.99"])

    class Dict(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = nn.Linear(4, 4)
            self.classifier = nn.Linear(4, 2)

        def forward(self, x):
            return self.classifier(self.inner(x))

    d = Dict()
    d.inner.register_forward_hook(lambda mod, a, o: {"h": o})  # its output becomes a dict
    with pytest.raises(CollapseLabError, match="--layer 'inner': its output is a dict, not a tensor"):
        layer_spectra(d, torch.randn(3, 4), ["inner"])
    with pytest.raises(CollapseLabError, match="covariances need .* GiB .*read fewer or narrower layers"):
        layer_spectra(net, x, max_bytes=1000)


def test_maps_read_at_fixed_positions_equal_numpy_on_the_same_positions():
    """--positions P: a conv map's values at P fixed positions, flattened (C x P a sample);
    the positions are P distinct ones, sorted, the same every call, all of them where the map
    has no more; the spectrum equals numpy's covariance of the hand-selected values."""
    from collapse_lab.layerwise import sample_positions

    pos = sample_positions(64, 5)
    assert len(set(pos.tolist())) == 5 and pos.tolist() == sorted(pos.tolist()) and int(pos.max()) < 64
    assert torch.equal(pos, sample_positions(64, 5)) and torch.equal(sample_positions(9, 16), torch.arange(9))
    torch.manual_seed(0)
    net = MODELS.call("cnn", 10, (3, 8, 8)).double().eval()
    x = torch.randn(50, 3, 8, 8, dtype=torch.float64)
    got = layer_spectra(net, x, ["features.1", "z"], positions=5, batch_size=16)
    maps = []
    h = net.features[1].register_forward_hook(lambda m, a, o: maps.append(o.numpy().copy()))
    with torch.no_grad():
        net(x)
    h.remove()
    m = maps[0]  # N x C x 8 x 8
    rows = m.reshape(m.shape[0], m.shape[1], -1)[:, :, pos.numpy()].reshape(m.shape[0], -1)
    sv, floor, width = got["features.1"]
    assert width == m.shape[1] * 5
    assert np.allclose(sv.numpy(), _eig_desc(np.cov(rows, rowvar=False, bias=True)), rtol=1e-9, atol=max(floor, 1e-300))
    # z (not a map) is the same either way
    plain = layer_spectra(net, x, ["z"], batch_size=16)["z"]
    assert torch.allclose(got["z"][0], plain[0], rtol=1e-12, atol=plain[1])
