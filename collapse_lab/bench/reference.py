"""The reference loop: local training the way the official FedDecorr code (ported from
MOON) does it, for ``collapse-lab bench`` and for the tests that check the fast path
against it.

Per client: a ``DataLoader`` over per-sample numpy HWC uint8 images, each turned into a
PIL image and transformed on its own (pad-and-crop, flip, AutoAugment with PIL and
scipy, ``ToTensor``, ``Normalize``), collated into a batch, fp32, the model moved to the
device for the client and back afterwards, a fresh SGD optimizer. The per-image
operations here follow the official ``data_aug_utils.py`` with the random value passed
in, so the batched ones in ``collapse_lab.augment`` can be compared with them image by
image.
"""
from __future__ import annotations

import random

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image, ImageEnhance, ImageOps
from scipy import ndimage

from ..augment import autoaugment as aa

# -- per-image operations (PIL / scipy), the official semantics --------------------------


def _affine(img: Image.Image, m: np.ndarray) -> Image.Image:
    a = np.asarray(img)
    ox, oy = a.shape[0] / 2 + 0.5, a.shape[1] / 2 + 0.5
    t = np.array([[1, 0, ox], [0, 1, oy], [0, 0, 1]]) @ m @ np.array([[1, 0, -ox], [0, 1, -oy], [0, 0, 1]])
    out = np.stack([ndimage.affine_transform(a[:, :, c], t[:2, :2], t[:2, 2]) for c in range(a.shape[2])], axis=2)
    return Image.fromarray(out)


def ref_op(img: Image.Image, op: str, value: float) -> Image.Image:
    """One AutoAugment operation with its (already drawn) value, per the official code."""
    h, w = img.size[1], img.size[0]
    if op == "ShearX":
        return _affine(img, np.array([[1, value, 0], [0, 1, 0], [0, 0, 1.0]]))
    if op == "ShearY":
        return _affine(img, np.array([[1, 0, 0], [value, 1, 0], [0, 0, 1.0]]))
    if op == "TranslateX":
        return _affine(img, np.array([[1, 0, 0], [0, 1, w * value], [0, 0, 1.0]]))
    if op == "TranslateY":
        return _affine(img, np.array([[1, 0, h * value], [0, 1, 0], [0, 0, 1.0]]))
    if op == "Rotate":
        th = np.deg2rad(value)
        return _affine(img, np.array([[np.cos(th), -np.sin(th), 0], [np.sin(th), np.cos(th), 0], [0, 0, 1.0]]))
    if op == "AutoContrast":
        return ImageOps.autocontrast(img)
    if op == "Invert":
        return ImageOps.invert(img)
    if op == "Equalize":
        return ImageOps.equalize(img)
    if op == "Solarize":
        return ImageOps.solarize(img, value)
    if op == "Posterize":
        return ImageOps.posterize(img, int(round(value)))
    enhancer = {"Contrast": ImageEnhance.Contrast, "Color": ImageEnhance.Color,
                "Brightness": ImageEnhance.Brightness, "Sharpness": ImageEnhance.Sharpness}[op]
    return enhancer(img).enhance(value)


def ref_value(op: str, index: int, u: float) -> float:
    """uniform(v[index], v[index+1]) on the op's 11-point grid, with u the uniform draw."""
    if aa.GRID[op] is None:
        return 0.0
    grid = np.linspace(*aa.GRID[op], 11)
    return float(grid[index] + (grid[index + 1] - grid[index]) * u)


def ref_crop(img: Image.Image, top: int, left: int, pad: int = 4) -> Image.Image:
    """torchvision RandomCrop(size, padding=pad): zero padding, then the crop at (top, left)."""
    w, h = img.size
    return ImageOps.expand(img, border=pad, fill=0).crop((left, top, left + w, top + h))


def ref_flip(img: Image.Image, flag: bool) -> Image.Image:
    return img.transpose(Image.Transpose.FLIP_LEFT_RIGHT) if flag else img


def to_tensor(img: Image.Image, mean, std) -> torch.Tensor:
    """ToTensor (HWC uint8 -> CHW float in [0, 1]) then Normalize."""
    x = torch.from_numpy(np.array(img, dtype=np.uint8)).permute(2, 0, 1).float().div(255)
    m = torch.tensor(mean).view(-1, 1, 1)
    s = torch.tensor(std).view(-1, 1, 1)
    return (x - m) / s


class OfficialTransform:
    """The per-sample training transform of the official code for an augmentation spec,
    drawing with Python's ``random`` as it does (in DataLoader workers, seeded per worker)."""

    def __init__(self, spec: str, mean, std):
        self.steps = [] if spec == "none" else spec.split("+")
        self.mean, self.std = mean, std

    def __call__(self, a: np.ndarray) -> torch.Tensor:
        img = Image.fromarray(a)
        for step in self.steps:
            if step == "crop":
                img = ref_crop(img, random.randint(0, 8), random.randint(0, 8))
            elif step == "flip":
                img = ref_flip(img, random.random() < 0.5)
            elif step == "autoaugment":
                sub = aa.POLICY[random.randrange(len(aa.POLICY))]
                for op, p, m in sub:
                    if random.random() < p:
                        img = ref_op(img, op, ref_value(op, m, random.random()))
        return to_tensor(img, self.mean, self.std)


class PerSampleImages(torch.utils.data.Dataset):
    """Images as the official ``CIFAR10_truncated`` holds them: numpy (N, H, W, C) uint8."""

    def __init__(self, images: np.ndarray, labels: np.ndarray, transform):
        self.images, self.labels, self.transform = images, labels, transform

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int):
        return self.transform(self.images[i]), int(self.labels[i])


def client_loader(images: np.ndarray, labels: np.ndarray, transform, batch_order: list[torch.Tensor],
                  workers: int = 0) -> torch.utils.data.DataLoader:
    """A DataLoader over one client's images. ``batch_order`` (lists of client-local
    indices) fixes the batches, so both loops see the same samples in the same steps."""
    ds = PerSampleImages(images, labels, transform)
    return torch.utils.data.DataLoader(ds, batch_sampler=[b.tolist() for b in batch_order], num_workers=workers,
                                       persistent_workers=False)


def train_client_reference(model: torch.nn.Module, loaders, device: torch.device, *, lr: float, momentum: float,
                           weight_decay: float, reg=None, beta: float = 0.0) -> int:
    """Official-style local training: model to the device, fresh SGD, fp32, one loader per
    epoch, model back to the CPU. Returns the number of steps."""
    model.to(device).train()
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr, momentum=momentum,
                          weight_decay=weight_decay)
    steps = 0
    for loader in loaders:
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            opt.zero_grad()
            logits, z = model(xb)
            loss = F.cross_entropy(logits, yb)
            if reg is not None:
                loss = loss + beta * reg(z, logits)
            loss.backward()
            opt.step()
            loss.item()  # the official loop reads the loss every step (a device sync)
            steps += 1
    model.to("cpu")
    return steps


@torch.no_grad()
def evaluate_reference(model: torch.nn.Module, images: np.ndarray, labels: np.ndarray, mean, std,
                       device: torch.device, batch_size: int = 1024, workers: int = 0, transform=None) -> float:
    """The official ``compute_accuracy``: a DataLoader with per-sample transforms (the test
    transform unless one is given: the official code measures clients' training accuracy
    through their augmented training loader)."""
    ds = PerSampleImages(images, labels, transform or OfficialTransform("none", mean, std))
    loader = torch.utils.data.DataLoader(ds, batch_size=batch_size, shuffle=False, num_workers=workers)
    model.to(device).eval()
    correct = 0
    for xb, yb in loader:
        correct += (model(xb.to(device))[0].argmax(1).cpu() == yb).sum().item()
    model.to("cpu")
    return correct / max(len(labels), 1)
