"""Devices: which one a run uses, and host-to-device copies that do not make the host wait for the GPU."""
from __future__ import annotations

import torch


def to_device(t: torch.Tensor, device: torch.device | str) -> torch.Tensor:
    """``t`` (on the CPU) on ``device``. To CUDA it goes through pinned memory without
    blocking: a copy from pageable memory synchronises the stream, which stalls the host
    until every kernel queued before it has run (the launch queue then runs dry). The
    pinned block stays reserved until the copy has completed (PyTorch's host allocator
    records the stream)."""
    device = torch.device(device)
    if device.type != "cuda" or t.device.type != "cpu":
        return t.to(device)
    return t.pin_memory().to(device, non_blocking=True)


def resolve_device(spec: str) -> torch.device:
    """``auto`` (CUDA when present), ``cpu``, ``cuda`` or ``cuda:N``; one-line errors."""
    from .errors import CollapseLabError

    if spec == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if spec.startswith("cuda") and not torch.cuda.is_available():
        raise CollapseLabError(f"--device {spec}: no CUDA device here; use --device cpu or auto")
    try:
        return torch.device(spec)
    except RuntimeError:
        raise CollapseLabError(f"--device {spec!r} is not a device; use auto, cpu, cuda or cuda:N") from None
