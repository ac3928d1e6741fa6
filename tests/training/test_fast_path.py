"""The fast path's pieces: augmented batches stay aligned with their labels, the bf16
autocast code path (run on CPU here), torch.compile, and exact resume of an augmented run."""
import json
import os
import signal
import subprocess
import sys

import pytest
import torch
from click.testing import CliRunner

from collapse_lab.augment import Pipeline
from collapse_lab.cli import cli
from collapse_lab.training.fastpath import FastPath
from collapse_lab.training.local import PLAIN, batches, epoch_raw
from collapse_lab.training.trainer import train_client
from collapse_lab.models import MODELS
from tests.conftest import write_cifar


def test_augmented_chunks_keep_images_with_their_labels():
    # image i is constant i (an odd 9x9 picture), so after a crop its centre pixel still says which it was
    n = 37
    x = torch.arange(n, dtype=torch.uint8).view(n, 1, 1, 1).expand(n, 3, 9, 9).contiguous()
    y = torch.arange(n)
    g = torch.Generator().manual_seed(0)
    order = batches(n, 5, g)
    fast = FastPath(augment=Pipeline("crop+flip"), chunk=12)
    seen = []
    for xb, yb in epoch_raw(x, y, order, fast, torch.Generator().manual_seed(1)):
        xb = xb.float()
        assert torch.equal(xb[:, 0, 4, 4], yb.float())  # centre survives a crop of at most 4 pixels
        seen.append(yb)
    assert torch.equal(torch.cat(seen), torch.cat(order))  # same samples, same order as without augmentation
    assert [len(b) for b in seen] == [len(b) for b in order]
    # the crop happened: some image has zero padding in view
    xs = torch.cat([xb for xb, _ in epoch_raw(x, y, order, fast, torch.Generator().manual_seed(1))])
    assert (xs[:, 0, 0, 0] == 0).sum() > (torch.cat(order) == 0).sum()


def _client(fast, reg=None, seed=0):
    torch.manual_seed(0)
    model = MODELS.get("cnn")(num_classes=4, input_shape=(3, 8, 8))
    g = torch.Generator().manual_seed(3)
    x = torch.randint(0, 256, (40, 3, 8, 8), generator=g, dtype=torch.uint8)
    y = torch.randint(0, 4, (40,), generator=g)
    hist = train_client(model, x, y, lambda t: t.float() / 255, epochs=1, batch_size=8, lr=0.1, momentum=0.9,
                        weight_decay=0.0, reg=reg, beta=0.1, generator=torch.Generator().manual_seed(seed), fast=fast)
    return model, hist


def test_bf16_autocast_path_keeps_fp32_weights_losses_and_regularizer_input():
    dtypes = []

    def reg(z, logits):
        dtypes.append((z.dtype, logits.dtype))
        return (z * z).mean()

    m16, h16 = _client(FastPath(autocast=torch.bfloat16), reg)
    m32, h32 = _client(PLAIN, reg)
    other, _ = _client(PLAIN, reg, seed=1)  # fp32 with another batch order: the scale of a real difference
    assert set(dtypes) == {(torch.float32, torch.float32)}
    assert all(p.dtype == torch.float32 for p in m16.parameters())

    def dist(a, b):
        return sum((p - q).norm() ** 2 for p, q in zip(a.parameters(), b.parameters())).sqrt().item()

    # bf16 forward: not the fp32 computation, but far closer to it than another batch order
    assert 0 < dist(m16, m32) < 0.25 * dist(other, m32)
    assert h16[0]["steps"] == h32[0]["steps"] == 5
    assert abs(h16[0]["ce"] - h32[0]["ce"]) < 0.05 * h32[0]["ce"]


@pytest.mark.slow
def test_channels_last_and_compile_match_plain_fp32():
    base, _ = _client(PLAIN)
    for fast in (FastPath(channels_last=True), None):
        if fast is None:  # torch.compile of the same model: the forward is generated code
            torch.manual_seed(0)
            model = MODELS.get("cnn")(num_classes=4, input_shape=(3, 8, 8))
            fast = FastPath(forward=torch.compile(model))
            g = torch.Generator().manual_seed(3)
            x = torch.randint(0, 256, (40, 3, 8, 8), generator=g, dtype=torch.uint8)
            y = torch.randint(0, 4, (40,), generator=g)
            train_client(model, x, y, lambda t: t.float() / 255, epochs=1, batch_size=8, lr=0.1, momentum=0.9,
                         weight_decay=0.0, reg=None, beta=0.1, generator=torch.Generator().manual_seed(0), fast=fast)
        else:
            model, _ = _client(fast)
        for a, b in zip(model.parameters(), base.parameters()):
            assert (a - b).abs().max().item() <= 1e-5 * max(b.abs().max().item(), 1.0)


ARGS = ["train", "--dataset", "cifar100", "--model", "cnn", "--clients", "3", "--alpha", "0.5", "--rounds", "3",
        "--local-epochs", "2", "--batch-size", "8", "--min-size", "2", "--device", "cpu"]


def _files(out):
    (run,) = [p for p in out.iterdir() if (p / "run.json").is_file()]
    return run, {str(f.relative_to(run)): f.read_bytes() for f in sorted(run.rglob("*.safetensors"))}


@pytest.mark.precision("fp32")  # compares with fp32 numbers, run names or round-off
@pytest.mark.slow
def test_augmented_run_resumes_bit_identical(tmp_path):
    root = tmp_path / "data"
    write_cifar(root, "cifar100", n_per_file=40)
    ref = tmp_path / "ref"
    res = CliRunner().invoke(cli, [*ARGS, "--data-root", str(root), "--store", str(ref)])
    assert res.exit_code == 0, res.output
    run, want = _files(ref)
    meta = json.loads((run / "run.json").read_text())
    assert meta["augment"] == "crop+flip+autoaugment" and meta["precision"] == "fp32"  # the paper's CIFAR-100 choice

    plain = tmp_path / "plain"
    res = CliRunner().invoke(cli, [*ARGS, "--data-root", str(root), "--store", str(plain), "--augment", "none"])
    assert res.exit_code == 0, res.output
    _, no_aug = _files(plain)
    assert no_aug["round_1/client_0.safetensors"] != want["round_1/client_0.safetensors"]  # augmentation acted

    out = tmp_path / "killed"
    env = {**os.environ, "COLLAPSE_LAB_FAULT": "step:2:1#2"}
    proc = subprocess.run([sys.executable, "-m", "collapse_lab.cli", *ARGS, "--data-root", str(root), "--store", str(out)],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-400:]
    res = CliRunner().invoke(cli, [*ARGS, "--data-root", str(root), "--store", str(out), "--resume"])
    assert res.exit_code == 0, res.output
    _, got = _files(out)
    assert got == want


def test_local_eval_is_optional_and_changes_nothing_else(tmp_path):
    args = ["train", "--dataset", "gaussian", "--dataset-option", "dim=8", "--dataset-option", "train_per_class=20",
            "--dataset-option", "test_per_class=5", "--local-epochs", "1", "--rounds", "2", "--clients", "3",
            "--alpha", "0.5", "--device", "cpu"]
    runs = {}
    for name, extra in (("plain", []), ("evals", ["--local-eval"])):
        res = CliRunner().invoke(cli, [*args, *extra, "--store", str(tmp_path / name)])
        assert res.exit_code == 0, res.output
        run, files = _files(tmp_path / name)
        events = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
        runs[name] = (files, events)
    assert runs["plain"][0] == runs["evals"][0]  # same checkpoints, byte for byte
    assert not [e for e in runs["plain"][1] if e["event"] == "local_eval"]  # off by default
    evals = [e for e in runs["evals"][1] if e["event"] == "local_eval"]
    assert sorted((e["round"], e["client"]) for e in evals) == [(r, k) for r in (1, 2) for k in range(3)]
    assert all(0 <= e["test_acc"] <= 1 for e in evals)
    rounds = [e for e in runs["evals"][1] if e["event"] == "round" and e["round"] > 0]
    assert all(e["write_seconds"] >= 0 and e["write_wait_seconds"] >= 0 for e in rounds)
