"""Covariance spectra of every block of a network, from one forward pass (issue 50).

The papers measure collapse at one place, the representation z before the classifier. Here
the output of each chosen module is read by a forward hook on every batch of the evaluation
set and reduced to one row per sample by a stated rule (``reduce``):

- a convolutional map N x C x H x W (or N x C x L): **gap**, global average pooling, the
  mean of each channel over its positions (a C-dimensional row per sample), as the
  networks' own pooling before their classifier does; or, with ``positions`` P, the map's
  values at P fixed positions (one seeded draw, the same for every model), flattened: a
  C x P row per sample, which keeps the spatial structure pooling averages away;
- anything else N x ...: flattened to N x d.

Each layer's covariance is accumulated in float64 as the batches pass
(``spectra.streaming.StreamingCovariance``), so no layer's N x d matrix is held. The model is
a float64 copy (or float32 where asked) in eval mode (BatchNorm uses its running statistics). By default the layers
read are the model's stages (``default_layers``: its residual blocks, else its activation
modules), then z, the input of the last linear layer (a stage whose output is z, as the
CNN's last activation, is read once, as z); ``layers`` names any modules of
``model.named_modules()``.
"""
from __future__ import annotations

import copy
from typing import Callable

import torch
import torch.nn as nn

from ..errors import CollapseLabError
from ..spectra.streaming import StreamingCovariance
from .modules import find_module, forward_with_hooks, last_linear

ACTIVATIONS = (nn.ReLU, nn.ReLU6, nn.GELU, nn.SiLU, nn.Tanh, nn.LeakyReLU, nn.ELU)
Z = "z"  # the representation: the input of the last linear layer
MAX_BYTES = 4 << 30  # the layers' float64 scatter matrices together, at most (4 GiB)


BLOCKS = ("Block", "Bottleneck")  # class names of residual stages (their activations are functional)


def default_layers(model: nn.Module) -> list[str]:
    """The model's stages in registration order, then z: its residual blocks (modules whose
    class name ends in Block or Bottleneck: ResNet, MobileNetV2) where it has them, else its
    activation modules (the CNNs, the MLP, VGG: each layer's output after its non-linearity)."""
    blocks = [n for n, m in model.named_modules() if type(m).__name__.endswith(BLOCKS)]
    return (blocks or [n for n, m in model.named_modules() if isinstance(m, ACTIVATIONS)]) + [Z]


def sample_positions(n: int, p: int) -> torch.Tensor:
    """``p`` of a map's ``n`` positions (all where ``n <= p``), sorted: a fixed draw (its own
    seed, 0), so every model, round and run is read at the same positions."""
    if n <= p:
        return torch.arange(n)
    return torch.randperm(n, generator=torch.Generator().manual_seed(0))[:p].sort().values


def reduce_rows(name: str, out, positions: int = 0) -> torch.Tensor:
    """One row per sample of a module's output (see the module docstring); with
    ``positions`` a convolutional map is its values at that many fixed positions, flattened."""
    if isinstance(out, (tuple, list)) and out and isinstance(out[0], torch.Tensor):
        out = out[0]
    if not isinstance(out, torch.Tensor):
        raise CollapseLabError(f"--layer {name!r}: its output is a {type(out).__name__}, not a tensor; name a module "
                               "whose output is one")
    if out.dim() >= 3 and positions:  # C values at each of the sampled positions: N x (C * P)
        flat = out.flatten(2)
        return flat[:, :, sample_positions(flat.shape[2], positions).to(flat.device)].flatten(1)
    if out.dim() >= 3:  # N x C x (H x W | L): the mean of each channel over its positions
        return out.flatten(2).mean(2)
    return out.flatten(1) if out.dim() != 1 else out[:, None]


def _read(m: nn.Module, names: list[str], x: torch.Tensor, to_float, dtype, device, batch_size: int,
          stats: dict | None, positions: int = 0) -> dict:
    """Forward ``x`` once, batch by batch; with ``stats`` add each layer's rows to its
    accumulator, without them return each layer's rows (of the last batch)."""
    last: dict[str, torch.Tensor] = {}  # each layer's rows of the last batch

    def grab(hooked, out):
        name = Z if hooked is None else hooked
        rows = reduce_rows(name, out, positions)
        last[name] = rows
        if stats is not None:
            stats[name].add(rows)

    forward_with_hooks(m, [None if n == Z else n for n in names], x, grab, to_float, dtype, device, batch_size)
    return last


def _is_z(rows: torch.Tensor, z: torch.Tensor | None) -> bool:
    """Whether a stage's rows are z's (the CNN's last activation, ResNet's last block after
    pooling): a default stage that is z is read once, as z."""
    rtol = 1e-12 if rows.dtype == torch.float64 else 1e-5  # the pooling's own rounding
    return z is not None and rows.shape == z.shape and torch.allclose(rows, z, rtol=rtol, atol=0)


def layer_spectra(model: nn.Module, x: torch.Tensor, layers: list[str] | None = None, to_float: Callable | None = None,
                  device: torch.device | str = "cpu", batch_size: int = 512, max_bytes: int = MAX_BYTES,
                  dtype: torch.dtype = torch.float64, positions: int = 0) -> dict[str, tuple[torch.Tensor, float, int]]:
    """name -> (singular values of the layer's covariance, descending float64; their
    numerical floor; the layer's width) for the layers (default ``default_layers``), from
    one forward pass over ``x`` in ``dtype`` (float64 by default; float32 is several times
    faster for convolutions on a CPU, its rows rounded to float32 before the float64
    covariance); ``positions``: convolutional maps read at that many fixed positions
    (``reduce_rows``) instead of pooled. An unknown layer, a layer whose output is no tensor, or layers whose
    covariances would not fit ``max_bytes`` are one line each."""
    m = copy.deepcopy(model).to(device=device, dtype=dtype).eval()
    names = list(dict.fromkeys(layers or default_layers(m)))
    for name in names:
        find_module(m, last_linear(m) if name == Z else name)  # an unknown name is one line, before any pass
    first = _read(m, names, x[:8], to_float, dtype, device, 8, None, positions)
    if layers is None:
        names = [n for n in names if n == Z or n not in first or not _is_z(first[n], first.get(Z))]
    widths = {n: first[n].shape[1] for n in names if n in first}
    need = sum(8 * w * w for w in widths.values())
    if need > max_bytes:
        big = max(widths, key=widths.get)
        raise CollapseLabError(f"--layer: the layers' covariances need {need / 2**30:.1f} GiB (largest {big!r}, "
                               f"{widths[big]:,} wide), more than {max_bytes / 2**30:.1f} GiB; read fewer or "
                               "narrower layers")
    missing = [n for n in names if n not in widths]
    if missing:
        raise CollapseLabError(f"--layer {missing[0]!r}: the module is not called in the model's forward pass")
    stats = {n: StreamingCovariance(widths[n]) for n in names}
    _read(m, names, x, to_float, dtype, device, batch_size, stats, positions)
    return {n: (*stats[n].spectrum(), widths[n]) for n in names}
