"""Settings of the fast training path: precision, memory format, compilation, augmentation.

Data sets already live on the training device as uint8 tensors and clients draw batches
by index (``engine.train``); this module turns a run's config into the ``FastPath`` that
local training uses and the ``TrainerPlan`` (lanes, CUDA graphs), and keeps fp32 honest
on CUDA (no TF32 unless bf16 was asked for).
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

import torch

from ..runspec.speed import check_speed
from ..augment import Pipeline
from .fastpath import FastPath


# Clients trained side by side on CUDA when --parallel-clients is not given (training.trainer).
# The measured best on an H100, MobileNetV2, the paper's CIFAR-10 round: 5 lanes 20.7 s per
# round, 4 lanes (before stride scheduling) 21.7 s; other counts unmeasured (docs/fast-path.md).
DEFAULT_LANES = 5


def cpu_bf16_native() -> bool:
    """Whether this CPU multiplies bf16 in hardware (AVX512-BF16 or AMX-BF16 in
    /proc/cpuinfo). Reported by ``bench`` beside a bf16 measurement; it never chooses a
    precision (issue 47: a run's precision is the user's choice or the device's kind)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((ln for ln in f if ln.startswith("flags")), "")
    except OSError:
        return False
    return any(f in flags.split() for f in ("avx512_bf16", "amx_bf16"))


@dataclass(frozen=True)
class TrainerPlan:
    lanes: int  # clients trained at once (1: one after another)
    capture: bool  # CUDA graphs
    note: str | None = None  # why a speed option was not used, shown once


def plan_trainer(cfg, device: torch.device, per_round: int) -> TrainerPlan:
    """How the trainer (``training.trainer``) runs a run's clients; speed only, never the math.

    ``--cuda-graphs``: auto captures on CUDA when the method's local training is plain SGD on
    CE + beta R (``Method.capturable``), the regularizer can be held in a graph
    (``graph_safe``) and ``--compile`` is off, and falls back (saying so) otherwise; on
    insists; off never. ``--parallel-clients N``: N clients at once; 0 = automatic:
    ``DEFAULT_LANES`` on CUDA with graphs, one per intra-op thread on a multi-threaded CPU
    for capturable methods (measured to pay there, docs/fast-path.md), else 1."""
    why = check_speed(cfg, device)
    cuda = device.type == "cuda"
    capture = cuda and cfg.cuda_graphs != "off" and not why
    note = (f"CUDA graphs off for this run: {'; '.join(why)}" if cuda and cfg.cuda_graphs == "auto" and why else None)
    if cfg.parallel_clients:
        n = cfg.parallel_clients
    elif capture:
        n = DEFAULT_LANES
    elif not cuda and not why and torch.get_num_threads() > 1:
        n = torch.get_num_threads()
    else:
        n = 1
    return TrainerPlan(max(1, min(n, per_round)), capture, note)


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
