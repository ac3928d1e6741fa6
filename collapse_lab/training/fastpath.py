"""The ``FastPath`` record: how local training runs on its device. ``fast.build`` makes it
from a run's configuration; ``local`` and ``trainer`` follow it."""
from __future__ import annotations

from typing import Callable

import torch


class FastPath:
    """How local training runs on its device (none of it changes the math, except bf16):
    ``augment`` a batched pipeline applied to each epoch's data in chunks on the device,
    with its own generator; ``autocast`` a dtype for the forward pass on CUDA (bf16; the
    weights, optimizer state, losses and the regularizer stay fp32); ``channels_last``
    for convolutional inputs; ``forward`` a compiled version of the model to call."""

    def __init__(self, augment=None, autocast: torch.dtype | None = None, channels_last: bool = False,
                 forward: Callable | None = None, chunk: int = 4096):
        self.augment = augment
        self.autocast, self.channels_last, self.forward, self.chunk = autocast, channels_last, forward, chunk


PLAIN = FastPath()  # fp32, no augmentation, no compilation
