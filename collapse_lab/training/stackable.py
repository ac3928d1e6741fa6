"""Which runs can train as one stack (``training.stacked``): the runs of one ``stack_key``
(everything their local step computes with), whose methods train locally by plain SGD and
whose regularizer has a form for padded batches, on models without buffers, without
augmentation or ``--compile``. Each refusal says why; such a run trains on its own."""
from __future__ import annotations

import torch.nn as nn

from ..config import RunConfig
from ..methods import build_run_model, method_capturable
from ..regularizers import has_masked_form
from .trainer import StepSpec

# What stacked runs must share: everything their local step computes with, besides data
# and starting weights (their partitions, seeds, lengths and server rules may differ).
SHARED = ("dataset", "data_root", "dataset_options", "image_size", "model", "model_revision", "reg", "reg_options", "beta",
          "local_epochs", "batch_size", "lr", "momentum", "weight_decay", "device", "augment", "precision", "compile")


def stack_key(cfg: RunConfig) -> tuple:
    """Runs with equal keys can train as one stack (if ``stack_reason`` allows)."""
    return tuple(repr(getattr(cfg, k)) for k in SHARED)


def config_reason(cfg: RunConfig) -> str | None:
    """Why a run cannot be stacked, from its (resolved) configuration alone (None: it can,
    unless its model has buffers: ``prepared_reason``)."""
    if not method_capturable(cfg):
        return f"--method {cfg.method} changes local training beyond plain SGD"
    if not has_masked_form(cfg.reg):
        return f"--reg {cfg.reg} has no form for padded batches"
    if cfg.augment not in ("none", "auto"):
        return "augmentation"
    if cfg.compile != "off":
        return "--compile"
    if cfg.local_eval:
        return "--local-eval"
    return None


def model_reason(cfg: RunConfig, model: nn.Module) -> str | None:
    if any(True for _ in model.buffers()):
        return f"--model {cfg.model} has buffers (BatchNorm statistics)"
    if any(not p.requires_grad for p in model.parameters()):
        return "frozen parameters"
    return None


def prepared_reason(p) -> str | None:
    """Why a prepared run (``training.prepare``) cannot be stacked, None if it can: its
    configuration, then its model (built once on the CPU to look at it)."""
    return config_reason(p.config) or model_reason(
        p.config, build_run_model(p.config, p.dataset.num_classes, p.dataset.input_shape))


def stack_reason(cfg: RunConfig, model: nn.Module, spec: StepSpec) -> str | None:
    """Why this run, as the engine built it, cannot be stacked (None: it can)."""
    reason = config_reason(cfg) or model_reason(cfg, model)
    if reason:
        return reason
    if spec.fast.augment:
        return "augmentation"
    return None
