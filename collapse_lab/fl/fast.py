"""Settings of the fast training path: precision, memory format, compilation, augmentation.

Data sets already live on the training device as uint8 tensors and clients draw batches
by index (``engine.train``); this module turns a run's config into the ``FastPath`` that
local training uses, and keeps fp32 honest on CUDA (no TF32 unless bf16 was asked for).
"""
from __future__ import annotations

import contextlib

import torch

from ..augment import Pipeline
from ..errors import CollapseLabError
from .local import FastPath

PRECISIONS = ("auto", "fp32", "bf16")
COMPILE_MODES = ("off", "default", "reduce-overhead", "max-autotune")


def resolve_precision(spec: str, device: torch.device) -> str:
    """auto -> bf16 on CUDA (fp32 master weights), fp32 elsewhere."""
    if spec not in PRECISIONS:
        raise CollapseLabError(f"--precision {spec!r}: use auto, fp32 or bf16")
    if spec == "auto":
        return "bf16" if device.type == "cuda" else "fp32"
    if spec == "bf16" and device.type != "cuda":
        raise CollapseLabError("--precision bf16 needs a CUDA device (on CPU autocast to bf16 is slower than fp32 "
                               "and not what the run would be compared with); use --precision fp32")
    return spec


def check_compile(mode: str) -> None:
    if mode not in COMPILE_MODES:
        raise CollapseLabError(f"--compile {mode!r}: use one of {', '.join(COMPILE_MODES)}")


@contextlib.contextmanager
def no_tf32():
    """fp32 matmuls and convolutions in full fp32 on CUDA (TF32 keeps 10 mantissa bits:
    collapsed spectral tails sit far below that)."""
    m, c = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = m, c


def build(cfg, model: torch.nn.Module, input_dims: int) -> tuple[torch.nn.Module, FastPath]:
    """The model in its training memory format and the FastPath of a run's config
    (precision already resolved). The compiled forward shares the model's parameters."""
    images = input_dims == 3
    channels_last = bool(cfg.channels_last) and images
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    forward = None
    if cfg.compile != "off":
        forward = torch.compile(model, mode=None if cfg.compile == "default" else cfg.compile)
    return model, FastPath(augment=Pipeline(cfg.augment), autocast=torch.bfloat16 if cfg.precision == "bf16" else None,
                           channels_last=channels_last, forward=forward)


def keep_host_memory(limit: int = 1 << 30) -> bool:
    """Let glibc keep freed host memory (blocks up to ``limit`` bytes) for reuse instead of
    unmapping or trimming it after every step, as PyTorch's caching allocator does on the
    GPU. On CPU every training step frees and reallocates the same activation buffers; with
    glibc's defaults the large ones are mmap-ed afresh each time and page-faulted in again
    (measured on 2 cores, MobileNetV2 with mixed batch sizes: 93 -> 124 images/s).
    Process-wide and irreversible; a no-op where the C library is not glibc. Returns
    whether it took effect."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3
    return bool(mallopt(m_mmap_threshold, limit)) and bool(mallopt(m_trim_threshold, limit))
