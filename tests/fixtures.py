"""Small in-memory data sets for tests (files in their on-disk formats are in conftest.py)."""
from __future__ import annotations

import numpy as np
import torch

from collapse_lab.data import Dataset


def random_images(n_train: int, n_test: int, seed: int, classes: int = 10) -> Dataset:
    """CIFAR-shaped uint8 images with uniform labels (speed and equality tests need no content)."""
    rng = np.random.default_rng(seed)
    x = torch.from_numpy(rng.integers(0, 256, size=(n_train + n_test, 3, 32, 32), dtype=np.uint8))
    y = torch.from_numpy(rng.integers(0, classes, size=n_train + n_test))
    return Dataset("random-images", x[:n_train], y[:n_train], x[n_train:], y[n_train:], num_classes=classes,
                   scale=255.0, mean=(0.49, 0.48, 0.45), std=(0.25, 0.24, 0.26))


def tiny_train_args(per_class: int = 30, test_per_class: int = 10, epochs: int = 2, batch: int = 16,
                    rounds: int | None = None, clients: int | None = None, alpha: str | None = None,
                    device: str | None = None) -> list[str]:
    """``train`` options for a run of a few seconds on the CPU: the Gaussian data set (8-d,
    ``per_class`` training and ``test_per_class`` test samples a class) and the MLP. The one
    list the CLI tests share; what a test changes is a keyword, not a copy."""
    args = ["--dataset", "gaussian", "--dataset-option", "dim=8", "--dataset-option", f"train_per_class={per_class}",
            "--dataset-option", f"test_per_class={test_per_class}", "--local-epochs", str(epochs),
            "--batch-size", str(batch)]
    for flag, v in (("--rounds", rounds), ("--clients", clients), ("--alpha", alpha), ("--device", device)):
        if v is not None:
            args += [flag, str(v)]
    return args


def invoke(*args):
    """The CLI in process (click's runner); arguments may be paths or numbers."""
    from click.testing import CliRunner

    from collapse_lab.cli import cli

    return CliRunner().invoke(cli, [str(a) for a in args])


def invoke_case(args: list[str], sub, fill: list[tuple]) -> object:
    """A table case of the CLI (the bad-input tests): each word goes through ``sub`` (a
    placeholder such as STORE -> a path), then every ``fill`` rule (``(applies, option,
    value)``, ``applies`` taking the command's words) whose option the case does not give
    appends it (the store and output folders a case leaves out)."""
    args = [sub(a) for a in args]
    given = set(args)
    for applies, option, value in fill:
        if applies(args) and option not in given:
            args += [option, str(value)]
            given.add(option)
    return invoke(*args)
