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
GRAPH_MODES = ("auto", "on", "off")
# Clients trained side by side on CUDA when --parallel-clients is not given (fl.graphed).
# The measured best on an H100, MobileNetV2, the paper's CIFAR-10 round: 5 lanes 20.7 s per
# round, 4 lanes (before stride scheduling) 21.7 s; other counts unmeasured (README, Fast path).
DEFAULT_LANES = 5


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


def resolve_lanes(cfg, device: torch.device, per_round: int) -> int:
    """How many lanes of step programs a run trains on (``fl.graphed``); 0 means the eager
    loop (``local.train_client``). ``--graphs auto`` is on when the method and regularizer
    allow it: on CUDA, captured, ``DEFAULT_LANES`` lanes; on the CPU, uncaptured, one lane
    per intra-op thread, each lane in a thread (with one thread: the eager loop).
    ``--graphs on`` insists (and refuses what cannot run so); ``off`` never."""
    from ..regularizers import REGULARIZERS
    from .methods import METHODS

    if cfg.graphs not in GRAPH_MODES:
        raise CollapseLabError(f"--graphs {cfg.graphs!r}: use auto, on or off")
    if cfg.parallel_clients < 0:
        raise CollapseLabError(f"--parallel-clients must be >= 0 (0: automatic; got {cfg.parallel_clients})")
    why = []
    if not METHODS.get(cfg.method).lane_safe:
        why.append(f"method {cfg.method} changes local training beyond SGD on CE + beta R")
    if not REGULARIZERS.get(cfg.reg).graph_safe:
        why.append(f"regularizer {cfg.reg} needs the host inside each step")
    if cfg.compile != "off":
        why.append(f"--compile {cfg.compile} makes graphs of its own")
    threads = torch.get_num_threads()
    pays = device.type == "cuda" or threads > 1 or cfg.parallel_clients > 1
    if cfg.graphs == "off" or (cfg.graphs == "auto" and (why or not pays)):
        if cfg.parallel_clients > 1:
            reason = "; ".join(why) or "--graphs off"
            raise CollapseLabError(f"--parallel-clients {cfg.parallel_clients} needs step programs, which are off "
                                   f"here ({reason}); drop --parallel-clients or use --graphs on")
        return 0
    if why:
        raise CollapseLabError(f"--graphs on: {'; '.join(why)}; use --graphs auto or off")
    n = cfg.parallel_clients or (DEFAULT_LANES if device.type == "cuda" else threads)
    return max(1, min(n, per_round))


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
