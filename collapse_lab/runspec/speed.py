"""The speed options of a run checked where it is named: precision, compilation, CUDA graphs,
clients side by side. They change how fast a run trains, never what it computes, except
precision, which names the run (bf16 runs are other runs than fp32 ones). The trainer's plan
that follows from them (lanes, capture) is ``training.fast.plan_trainer``."""
from __future__ import annotations

import torch

from ..errors import CollapseLabError
from ..methods import method_capturable
from ..regularizers import reg_spec

PRECISIONS = ("auto", "fp32", "bf16")
COMPILE_MODES = ("off", "default", "reduce-overhead", "max-autotune")
GRAPH_MODES = ("auto", "on", "off")


def resolve_precision(spec: str, device: torch.device) -> str:
    """auto -> bf16 autocast on CUDA, fp32 on every CPU; fp32 and bf16 as given.

    Decided from the device's kind alone, never from its load, its flags or a timing: the
    same command names the same run on every CPU (a resume finds its run), and CPU runs
    train as the papers' codes do, in fp32. A CPU with native bf16 (AVX512-BF16, AMX) may
    train faster with ``--precision bf16``, an explicit choice that names other runs
    (docs/training.md). bf16 is autocast: weights, optimizer state, the loss and the
    regularizers stay fp32; representations and spectra are float64."""
    if spec not in PRECISIONS:
        raise CollapseLabError(f"--precision {spec!r}: use auto, fp32 or bf16")
    if spec == "auto":
        return "bf16" if device.type == "cuda" else "fp32"
    return spec


def check_compile(mode: str) -> None:
    if mode not in COMPILE_MODES:
        raise CollapseLabError(f"--compile {mode!r}: use one of {', '.join(COMPILE_MODES)}")


def no_graph_reasons(cfg) -> list[str]:
    """Why a CUDA graph cannot hold the run's local steps (empty: it can)."""
    why = []
    if not method_capturable(cfg):
        why.append(f"method {cfg.method} enters local training through hooks")
    if not reg_spec(cfg.reg).graph_safe:
        why.append(f"regularizer {cfg.reg} needs the host inside each step")
    if cfg.compile != "off":
        why.append(f"--compile {cfg.compile} makes graphs of its own")
    return why


def check_speed(cfg, device: torch.device) -> list[str]:
    """Refuse speed options that cannot hold together on ``device`` (one line naming the
    option); returns ``no_graph_reasons``."""
    check_compile(cfg.compile)
    if cfg.cuda_graphs not in GRAPH_MODES:
        raise CollapseLabError(f"--cuda-graphs {cfg.cuda_graphs!r}: use auto, on or off")
    if cfg.parallel_clients < 0:
        raise CollapseLabError(f"--parallel-clients must be >= 0 (0: automatic; got {cfg.parallel_clients})")
    why = no_graph_reasons(cfg)
    if cfg.cuda_graphs == "on" and device.type != "cuda":
        raise CollapseLabError("--cuda-graphs on needs a CUDA device; use --cuda-graphs auto or off")
    if cfg.cuda_graphs == "on" and why:
        raise CollapseLabError(f"--cuda-graphs on: {'; '.join(why)}; use --cuda-graphs auto or off")
    if cfg.compile != "off" and cfg.parallel_clients > 1:
        raise CollapseLabError(f"--parallel-clients {cfg.parallel_clients} cannot share one compiled model "
                               f"(--compile {cfg.compile}); drop one of them")
    return why
