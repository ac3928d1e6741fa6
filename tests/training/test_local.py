"""Local training against a hand-written SGD loop."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from collapse_lab.training.local import batch_sizes, batches, num_batches
from collapse_lab.training.trainer import train_client
from collapse_lab.models import build_model
from collapse_lab.regularizers.feddecorr import feddecorr_loss


def test_one_epoch_matches_manual_sgd_with_regularizer():
    torch.manual_seed(0)
    model = build_model("mlp", 3, (5,))
    ref = build_model("mlp", 3, (5,))
    ref.load_state_dict(model.state_dict())
    x, y = torch.randn(40, 5), torch.randint(0, 3, (40,))
    lr, mom, wd, beta = 0.05, 0.9, 1e-3, 0.3
    hist = train_client(model, x, y, lambda t: t, epochs=1, batch_size=16, lr=lr, momentum=mom, weight_decay=wd,
                        reg=lambda z, logits: feddecorr_loss(z), beta=beta, generator=torch.Generator().manual_seed(1))
    # the same batches, by hand: SGD with momentum buffer b = mom*b + (g + wd*w), w -= lr*b
    bufs = {n: None for n, _ in ref.named_parameters()}
    ce_sum = 0.0
    for idx in batches(40, 16, torch.Generator().manual_seed(1)):
        logits, z = ref(x[idx])
        ce = F.cross_entropy(logits, y[idx])
        ce_sum += ce.item() * len(idx)
        loss = ce + beta * feddecorr_loss(z)
        grads = torch.autograd.grad(loss, list(ref.parameters()))
        with torch.no_grad():
            for (n, p), g in zip(ref.named_parameters(), grads):
                g = g + wd * p
                bufs[n] = g.clone() if bufs[n] is None else mom * bufs[n] + g
                p -= lr * bufs[n]
    for (n, p), (_, q) in zip(model.named_parameters(), ref.named_parameters()):
        assert torch.allclose(p, q, atol=1e-6), n
    assert hist[0]["samples"] == 40 and abs(hist[0]["ce"] - ce_sum / 40) < 1e-6
    assert hist[0]["reg"] > 0


def test_batches_cover_and_drop_single_tail():
    g = torch.Generator().manual_seed(0)
    b = batches(129, 64, g)
    assert [len(t) for t in b] == [64, 64]  # the 1-sample tail is dropped
    for n in (0, 1, 2, 63, 64, 65, 129, 130):
        b = batches(n, 64, torch.Generator().manual_seed(0))
        assert num_batches(n, 64) == len(b) and batch_sizes(n, 64) == {len(t) for t in b}
    assert batches(1, 64, g) == [] and num_batches(1, 64) == 0  # one sample: no batch at all


def test_a_one_sample_client_of_a_batchnorm_model_takes_no_step():
    """A split with --min-size below 2 (a smoke run's) can give a client one sample: BatchNorm
    cannot normalise it in training mode, so the client keeps the global model, as an empty one."""
    torch.manual_seed(0)
    model = build_model("small-cnn", 10, (3, 32, 32))
    with pytest.raises(ValueError, match="more than 1 value per channel"):  # why the sample is dropped
        model.train()(torch.randn(1, 3, 32, 32))
    before = {n: v.clone() for n, v in model.state_dict().items()}
    hist = train_client(model, torch.randn(1, 3, 32, 32), torch.tensor([3]), lambda t: t, epochs=2, batch_size=64,
                        lr=0.1, momentum=0.9, weight_decay=1e-4, reg=None, beta=0.0, generator=torch.Generator())
    assert sum(h["steps"] for h in hist) == 0
    assert all(torch.equal(before[n], v) for n, v in model.state_dict().items())
    b = batches(130, 64, torch.Generator().manual_seed(0))
    assert sorted(torch.cat(b).tolist()) == list(range(130))
