"""Helpers for the method tests: a method on a tiny run, local rounds through the trainer."""
from __future__ import annotations

import torch
import torch.nn as nn

from collapse_lab.config import RunConfig
from collapse_lab.methods import METHODS, ClientResult, build_run_model, make_method
from collapse_lab.training.trainer import train_client


def make(method: str, model: nn.Module | None = None, clients: int = 2, **over):
    base = dict(dataset="gaussian", model="mlp", method=method, clients=clients, rounds=4, local_epochs=1,
                batch_size=8, lr=0.1, momentum=0.0, weight_decay=0.0)
    cfg = RunConfig(**{**base, **over})
    cls = METHODS.get(method)
    cfg = RunConfig(**{**cfg.__dict__, "method_options": cls.resolve_options(dict(cfg.method_options), cfg)})
    if model is None:
        torch.manual_seed(0)
        model = build_run_model(cfg, 3, (5,))
    return cfg, model, make_method(cfg, model, clients)


def data(n=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 5, generator=g), torch.randint(0, 3, (n,), generator=g)


def run_round(method, cfg, model, global_state, r, datasets, steps_seed=0):
    results = []
    for k, (x, y) in enumerate(datasets):
        hooks = method.client_start(k, r, model, global_state)
        hist = train_client(model, x, y, lambda t: t, epochs=cfg.local_epochs, batch_size=cfg.batch_size, lr=cfg.lr,
                            momentum=cfg.momentum, weight_decay=cfg.weight_decay, reg=None, beta=0.0,
                            generator=torch.Generator().manual_seed(steps_seed + k), hooks=hooks)
        state = {n: v.detach().clone() for n, v in model.state_dict().items()}
        res = ClientResult(k, state, len(y), sum(h["steps"] for h in hist))
        method.client_end(k, r, hooks, res)
        results.append(res)
    return method.aggregate(r, global_state, results), results


def close(a: dict, b: dict, atol=1e-6):
    return all(torch.allclose(a[k].double(), b[k].double(), atol=atol) for k in a)
