"""Server/client algorithms, keyed by the ``--method`` name.

A method is one file here with a ``Method`` subclass decorated ``@METHODS.register(name)``.
It enters a round at four points: ``client_start`` (load the model a client starts from,
return the ``LocalHooks`` of its local training: a fresh object per client, holding that
client's state while it trains), ``client_end`` (handed those hooks and the result:
record what the client carries to later rounds), ``aggregate`` (client results -> new
global state) and ``evaluate``. ``server_state``/``client_state`` are the tensors it carries across rounds;
they are saved with each round's checkpoint and read back by ``load_state``.

Options are plain numbers with the papers' tuned values as defaults (``defaults``); the
resolved values are part of the run's configuration. Any method composes with any
regularizer: the regularizer is applied by local training, outside the method.

FedETF's two parts are add-ons every method takes (``addons.py``; FedETF Tables 2-4):
``etf_scale`` > 0 fixes the classifier to a simplex ETF, ``gmv_weight`` turns the global
memory vectors on (``gmv_warmup`` their first round). They enter a run's options only
when given, so runs stored before they existed keep their names; ``fedetf`` is FedAvg
with both on by default.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn

from ..errors import CollapseLabError
from ..options import resolve_numeric
from ..registry import Registry
from .aggregate import weighted_average
from .evaluate import evaluate
from .hooks import NO_HOOKS, LocalHooks

def _check(name, cls, info) -> None:
    if not (isinstance(cls, type) and issubclass(cls, Method)):
        raise TypeError(f"method {name}: register a subclass of Method")


METHODS: Registry = Registry("method", __name__, flag="--method", check=_check)


@dataclass
class ClientResult:
    client: int
    state: dict[str, torch.Tensor]  # the client's model after local training (CPU)
    samples: int  # n_k, the aggregation weight
    steps: int  # optimizer steps taken in this round


@dataclass
class EvalData:
    x: torch.Tensor
    y: torch.Tensor
    to_float: object
    batch_size: int
    test_domain: torch.Tensor | None = None
    client_domains: list | None = None  # per client: the domains in its training data


def trainable_names(model: nn.Module) -> list[str]:
    """State-dict keys of the parameters local SGD updates (frozen ones excluded)."""
    return [n for n, p in model.named_parameters() if p.requires_grad]


class Method:
    defaults: dict = {}  # option -> the papers' value (None: derived from the run, see check_options)
    int_options: frozenset = frozenset()
    # option -> its admissible range, checked before ``check_options``: ">= 0", "> 0" or "[0, 1)"
    bounds: dict = {}
    # model-sized copies of state written each round, for the disk estimate
    server_copies: float = 0.0
    client_copies: float = 0.0
    # Local training is plain SGD on CE + beta R: ``client_start`` only loads a model and
    # returns NO_HOOKS. A CUDA graph can hold such a method's steps (``training.trainer``), and
    # on the CPU its clients train side by side by default (as measured, docs/fast-path.md).
    capturable: bool = False

    @classmethod
    def resolve_options(cls, given: dict, cfg) -> dict:
        """Fill in the defaults and check names and values; raises CollapseLabError."""
        from .addons import ADDON_DEFAULTS, ADDON_INTS, check_addons

        extra = {k: v for k, v in given.items() if k in ADDON_DEFAULTS and k not in cls.defaults}
        own = {k: v for k, v in given.items() if k not in extra}
        unknown = sorted(set(own) - set(cls.defaults))
        if unknown:
            known = ", ".join(sorted(cls.defaults)) or "none"
            raise CollapseLabError(f"method {cfg.method} has no option {', '.join(unknown)}; its options: {known} "
                                   f"(and {', '.join(ADDON_DEFAULTS)} on every method)")
        out = resolve_numeric("method", cfg.method, cls.defaults, own, cls.int_options)
        out = cls.check_options(check_bounds(cfg.method, cls.bounds, out), cfg)
        out.update(resolve_numeric("method", cfg.method, {k: ADDON_DEFAULTS[k] for k in extra}, extra, ADDON_INTS))
        return check_addons(out, cfg)

    @classmethod
    def check_options(cls, opts: dict, cfg) -> dict:
        return opts

    @classmethod
    def notes(cls, model: nn.Module, cfg) -> list[str]:
        """One-line remarks shown before training (e.g. that the method is FedAvg here)."""
        return []

    @classmethod
    def prepare_model(cls, model: nn.Module, cfg, num_classes: int) -> None:
        """Additions to the model before round 0 (projection head)."""

    def bind_clients(self, label_counts: torch.Tensor) -> None:
        """The partition's clients x classes sample counts (float64), given once before the
        first round: for methods whose local training depends on a client's classes."""

    def __init__(self, cfg, model: nn.Module, num_clients: int):
        self.cfg = cfg
        self.opts = dict(cfg.method_options)
        self.num_clients = num_clients

    def client_start(self, k: int, r: int, model: nn.Module, global_state: dict) -> LocalHooks:
        model.load_state_dict(global_state)
        return NO_HOOKS

    def client_end(self, k: int, r: int, hooks: LocalHooks, result: ClientResult) -> None:
        """``hooks``: what ``client_start`` returned for this client."""

    def aggregate(self, r: int, global_state: dict, results: list[ClientResult]) -> dict:
        raise NotImplementedError

    def evaluate(self, model: nn.Module, global_state: dict, data: EvalData) -> dict:
        model.load_state_dict(global_state)
        return evaluate(model, data.x, data.y, data.to_float, data.batch_size, data.test_domain)

    def server_state(self) -> dict[str, torch.Tensor]:
        return {}

    def client_state(self) -> dict[str, torch.Tensor]:
        """Per-client tensors, keyed ``"<k>/<name>"``."""
        return {}

    def load_state(self, server: dict[str, torch.Tensor], clients: dict[str, torch.Tensor]) -> None:
        pass


RANGES = {">= 0": lambda v: v >= 0, "> 0": lambda v: v > 0, "[0, 1)": lambda v: 0 <= v < 1}
FLAGS = ("server_lr", "server_momentum")  # options with a flag of their own (--server-lr), named so


def check_bounds(method: str, bounds: dict, opts: dict) -> dict:
    """Each option of ``bounds`` in its range, or one line naming it, its range and the value."""
    for name, rng in bounds.items():
        v = opts.get(name)
        if v is not None and not RANGES[rng](v):
            what = f"--{name.replace('_', '-')}" if name in FLAGS else f"{method} {name}"
            where = f"in {rng}" if rng.startswith("[") else rng
            raise CollapseLabError(f"{what} must be {where} (got {v})")
    return opts


def split_client_state(flat: dict[str, torch.Tensor]) -> dict[int, dict[str, torch.Tensor]]:
    out: dict[int, dict[str, torch.Tensor]] = {}
    for key, v in flat.items():
        k, name = key.split("/", 1)
        out.setdefault(int(k), {})[name] = v
    return out


def join_client_state(per_client: dict[int, dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    return {f"{k}/{name}": v for k, d in sorted(per_client.items()) for name, v in d.items()}


def fedavg_of(results: list[ClientResult]) -> dict[str, torch.Tensor]:
    return weighted_average([c.state for c in results], [c.samples for c in results])


def build_run_model(cfg, num_classes: int, input_shape) -> nn.Module:
    """The run's architecture: the model plus its method's additions (and a fixed ETF
    classifier where ``etf_scale`` is on), so a stored checkpoint of any method loads into it."""
    from ..models import build_model, builder
    from .addons import etf_scale, fix_etf_classifier

    model = build_model(builder(cfg.model, cfg.model_revision), num_classes, input_shape)
    METHODS.get(cfg.method).prepare_model(model, cfg, num_classes)
    if scale := etf_scale(cfg, METHODS.get(cfg.method).defaults):
        fix_etf_classifier(model, cfg.seed, scale)
    return model


def make_method(cfg, model: nn.Module, num_clients: int) -> Method:
    """The run's method object, with the memory-vector add-on around it where it is on."""
    from .addons import WithGMV, uses_gmv

    method = METHODS.get(cfg.method)(cfg, model, num_clients)
    return WithGMV(method, cfg, model) if uses_gmv(cfg, METHODS.get(cfg.method).defaults) else method


def method_capturable(cfg) -> bool:
    """Local training is plain SGD on CE + beta R (no hooks): a CUDA graph can hold it and
    runs of it can be stacked."""
    from .addons import uses_gmv

    return METHODS.get(cfg.method).capturable and not uses_gmv(cfg, METHODS.get(cfg.method).defaults)


__all__ = ["METHODS", "Method", "ClientResult", "EvalData", "build_run_model", "make_method", "method_capturable",
           "trainable_names"]
