"""Regularizers on the batch representations z, added to the local loss as ``CE + beta * R``
(Eq. 9 of the FedDecorr paper), keyed by the ``--reg`` name.

A regularizer is one file here with a factory decorated
``@REGULARIZERS.register(name, defaults=..., choices=..., presets=..., beta=..., derive=...,
graph_safe=...)``: the factory takes its options (named in ``defaults``, with the papers'
values; numbers, or text whose allowed values ``choices`` lists) and, if it needs it,
``num_classes``, and returns ``callable(z, logits) -> scalar`` (or None for ``none``).
``presets`` gives the option values a preset sets where the user does not (FedDecorr's
released scaling at ``--preset paper``). Options are given as ``--reg-option KEY=VALUE``. ``masked`` (optional) is a factory
with the same parameters whose callable ``(z, logits, w)`` computes the same loss on the
rows where the 0/1 mask w is 1 (batches padded to one size, ``training.stacked``); ``derive(options, num_classes)``
fills options that depend on the data (None in ``defaults``); ``beta`` is the default
weight; ``graph_safe`` says that a CUDA graph can hold it (no host synchronisation, no
data-dependent shapes). ``resolve_options`` fills the defaults in, so a run's
configuration records every value it used.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..options import resolve_numeric
from ..registry import Registry, option_names

CONTEXT = ("num_classes",)  # what the engine hands a factory besides its options


def _check(name: str, factory: Callable, info: dict) -> None:
    params = set(option_names(factory))
    missing = sorted(set(info.get("defaults", {})) - params)
    extra = sorted(params - set(info.get("defaults", {})) - set(CONTEXT))
    if missing or extra:
        raise TypeError(f"regularizer {name}: the factory's parameters must be its options {sorted(info.get('defaults', {}))} "
                        f"plus any of {CONTEXT} (missing {missing}, unexpected {extra})")


REGULARIZERS: Registry = Registry("regularizer", __name__, flag="--reg", check=_check)


@dataclass(frozen=True)
class RegSpec:
    factory: Callable
    defaults: dict = field(default_factory=dict)
    beta: float = 0.1
    derive: Callable | None = None
    graph_safe: bool = True
    masked: Callable | None = None
    choices: dict = field(default_factory=dict)
    presets: dict = field(default_factory=dict)


def reg_spec(name: str) -> RegSpec:
    info = REGULARIZERS.info(name)
    return RegSpec(REGULARIZERS.get(name), dict(info.get("defaults", {})), info.get("beta", 0.1), info.get("derive"),
                   info.get("graph_safe", True), info.get("masked"), dict(info.get("choices", {})),
                   dict(info.get("presets", {})))


def default_beta(name: str) -> float:
    return reg_spec(name).beta


def preset_options(name: str, preset: str) -> dict:
    """The option values ``preset`` sets for regularizer ``name`` (below the user's)."""
    return dict(reg_spec(name).presets.get(preset, {}))


def resolve_options(name: str, given: dict, num_classes: int | None = None) -> dict:
    spec = reg_spec(name)
    out = resolve_numeric("regularizer", name, spec.defaults, given, choices=spec.choices)
    if spec.derive is not None and num_classes is not None:
        out = spec.derive(out, num_classes)
    return out


def build_regularizer(name: str, num_classes: int | None = None, **options):
    spec = reg_spec(name)
    context = {"num_classes": num_classes}
    wanted = option_names(spec.factory)
    return spec.factory(**resolve_options(name, options, num_classes), **{k: v for k, v in context.items() if k in wanted})


def has_masked_form(name: str) -> bool:
    """Whether the regularizer can run on padded batches (``none`` trivially can)."""
    return name == "none" or reg_spec(name).masked is not None


def build_masked_regularizer(name: str, num_classes: int | None = None, **options):
    """``callable(z, logits, w)`` on padded batches, or None for ``none``."""
    if name == "none":
        return None
    spec = reg_spec(name)
    context = {"num_classes": num_classes}
    wanted = option_names(spec.masked)
    return spec.masked(**resolve_options(name, options, num_classes), **{k: v for k, v in context.items() if k in wanted})


__all__ = ["build_masked_regularizer", "has_masked_form", "REGULARIZERS", "RegSpec", "build_regularizer", "default_beta", "preset_options", "reg_spec",
           "resolve_options"]
