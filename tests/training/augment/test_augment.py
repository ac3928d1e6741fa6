"""Batched augmentation vs the per-image route of the official code (PIL, scipy.ndimage)."""
import numpy as np
import pytest
import torch
from PIL import Image
from scipy import ndimage

from collapse_lab.augment import STEPS, Pipeline, resolve
from collapse_lab.data import DATASETS
from collapse_lab.augment import autoaugment as aa
from collapse_lab.augment import crop_flip
from collapse_lab.augment.geometric import affine_spline, centred, prefilter_matrix
from collapse_lab.bench import reference as ref
from collapse_lab.errors import CollapseLabError


def _images(n=12, size=32, seed=0):
    """Noise, smooth, low-contrast, flat and two-level images: every branch of the ops."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        kind = i % 5
        if kind == 0:
            a = rng.integers(0, 256, (size, size, 3))
        elif kind == 1:
            a = ndimage.gaussian_filter(rng.integers(0, 256, (size, size, 3)).astype(float), (2, 2, 0))
        elif kind == 2:
            a = rng.integers(90, 140, (size, size, 3))
        elif kind == 3:
            a = np.full((size, size, 3), 37)
        else:
            a = np.where(rng.random((size, size, 3)) < 0.5, 10, 200)
        out.append(np.ascontiguousarray(a.astype(np.uint8)))
    return out


def _batch(imgs):
    return torch.stack([torch.from_numpy(a).permute(2, 0, 1) for a in imgs]).contiguous()


def _pil_batch(pils):
    return torch.stack([torch.from_numpy(np.array(p)).permute(2, 0, 1) for p in pils])


def test_prefilter_matrix_is_scipys_spline_filter():
    for n in (1, 2, 5, 32, 64):
        want = ndimage.spline_filter1d(np.eye(n), 3, axis=0, mode="mirror")
        np.testing.assert_allclose(prefilter_matrix(n).numpy(), want, atol=1e-13)


@pytest.mark.parametrize("size", [32, 64])
def test_affine_spline_equals_scipy_affine_transform(size):
    rng = np.random.default_rng(1)
    imgs = _images(10, size)
    mats = []
    for _ in imgs:
        th, s, t = rng.uniform(-0.5, 0.5), rng.uniform(-0.3, 0.3), rng.uniform(-12, 12)
        mats.append(np.array([[np.cos(th), -np.sin(th) + s, t], [np.sin(th), np.cos(th), -t / 2], [0, 0, 1]]))
    a, off = centred(torch.tensor(np.stack(mats)), size, size)
    got = affine_spline(_batch(imgs), a, off)
    want = _pil_batch([ref._affine(Image.fromarray(im), m) for im, m in zip(imgs, mats)])
    assert torch.equal(got, want)


@pytest.mark.parametrize("op", aa.OPS)
def test_each_autoaugment_op_equals_the_official_per_image_op(op):
    imgs = _images(15, seed=hash(op) % 1000)
    rng = np.random.default_rng(2)
    idx = torch.tensor(rng.integers(0, 10, len(imgs)))
    u = torch.tensor(rng.random(len(imgs)))
    mag = aa.magnitude(op, idx, u)
    got = aa.apply_op(op, _batch(imgs), mag)
    want = _pil_batch([ref.ref_op(Image.fromarray(im), op, ref.ref_value(op, int(i), float(v)))
                       for im, i, v in zip(imgs, idx, u)])
    assert torch.equal(got, want), f"{op}: {(got.int() - want.int()).abs().max()} max difference"


def test_magnitude_is_a_uniform_draw_inside_the_bin():
    # hand-checked values of the official grids: shear bin 8 is [0.18, 0.24], solarize bin 2 [51.2, 76.8]
    assert aa.magnitude("ShearY", torch.tensor([8]), torch.tensor([0.5])).item() == pytest.approx(0.21)
    assert aa.magnitude("Solarize", torch.tensor([2]), torch.tensor([0.0])).item() == pytest.approx(51.2)
    assert aa.magnitude("Rotate", torch.tensor([0]), torch.tensor([1.0])).item() == pytest.approx(-24.0)
    assert aa.magnitude("Posterize", torch.tensor([7]), torch.tensor([0.5])).item() == pytest.approx(7.0)


def test_whole_policy_equals_a_per_image_replay():
    imgs = _images(60, seed=5)
    params = aa.draw(len(imgs), torch.Generator().manual_seed(3))
    got = aa.apply(_batch(imgs), params)
    want = []
    for i, im in enumerate(imgs):
        p = Image.fromarray(im)
        for slot, (op, _, m) in enumerate(aa.POLICY[int(params["sub"][i])]):
            if params["run"][i, slot]:
                p = ref.ref_op(p, op, ref.ref_value(op, m, float(params["v"][i, slot])))
        want.append(p)
    assert torch.equal(got, _pil_batch(want))
    assert not torch.equal(got, _batch(imgs))  # something was applied


def test_draw_frequencies_match_the_policy():
    n = 40000
    p = aa.draw(n, torch.Generator().manual_seed(0))
    counts = torch.bincount(p["sub"], minlength=25).double()
    assert (counts - n / 25).abs().max() < 5 * (n / 25) ** 0.5
    expected = aa._PROB[p["sub"]].sum(0)  # sum of the chosen sub-policies' probabilities
    got = p["run"].double().sum(0)
    assert ((got - expected).abs() < 5 * n ** 0.5 / 2).all()


def test_crop_and_flip_equal_pil_with_the_same_draws():
    imgs = _images(20, seed=7)
    g = torch.Generator().manual_seed(4)
    off = crop_flip.draw_crop(len(imgs), 4, g)
    flags = crop_flip.draw_flip(len(imgs), g)
    got = crop_flip.flip(crop_flip.crop(_batch(imgs), off, 4), flags)
    want = _pil_batch([ref.ref_flip(ref.ref_crop(Image.fromarray(im), int(o[0]), int(o[1])), bool(f))
                       for im, o, f in zip(imgs, off, flags)])
    assert torch.equal(got, want)
    many = crop_flip.draw_crop(3000, 4, g)
    assert set(many.flatten().tolist()) == set(range(9))  # torchvision's offsets: 0..2*pad inclusive


def test_crop_at_the_centre_offset_is_the_identity_and_shifts_otherwise():
    x = _batch(_images(3))
    assert torch.equal(crop_flip.crop(x, torch.tensor([[4, 4]] * 3), 4), x)
    y = crop_flip.crop(x, torch.tensor([[0, 4]] * 3), 4)  # 4 rows of zeros on top, image moved down
    assert (y[:, :, :4] == 0).all() and torch.equal(y[:, :, 4:], x[:, :, :-4])


@pytest.mark.parametrize("dataset,expected", [  # FedDecorr Sec. 5.1 and its code
    ("cifar10", "crop+flip"), ("cifar100", "crop+flip+autoaugment"), ("tinyimagenet", "autoaugment"),
    ("digits", "none"), ("mnist", "none"), ("gaussian", "none"), ("domains", "none")])
def test_auto_is_the_papers_augmentation_declared_by_the_data_set(dataset, expected):
    assert resolve("auto", DATASETS.info(dataset).get("augment", "none")) == expected


def test_pipeline_resolution_and_errors():
    assert resolve(" Crop + Flip ") == "crop+flip"
    assert resolve("auto") == "none"
    with pytest.raises(CollapseLabError, match=f"unknown step 'mixup'; .*from: {', '.join(STEPS.names())}"):
        resolve("crop+mixup")
    with pytest.raises(CollapseLabError, match="needs images"):
        Pipeline("flip")(torch.zeros(4, 64, dtype=torch.uint8), torch.Generator())


def test_pipeline_is_reproducible_and_device_independent_draws():
    x = _batch(_images(16))
    pipe = Pipeline("crop+flip+autoaugment")
    a = pipe(x, torch.Generator().manual_seed(9))
    b = pipe(x, torch.Generator().manual_seed(9))
    c = pipe(x, torch.Generator().manual_seed(10))
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert a.dtype == torch.uint8 and a.shape == x.shape
