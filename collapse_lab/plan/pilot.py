"""A short measured pilot of this machine as it is now (``ladder --dry-run --pilot S``): each
model of a plan trained for a few seconds on random inputs of its data's shape, at the batch
size and threads its runs will use, timed step by step. Its rate, with the spread of the step
times as a range, replaces the project's idle-machine figures for what the plan costs here:
other work on the cores, a slower processor or a faster one show in it. Training steps
only: evaluation and checkpoint writes are not in it."""
from __future__ import annotations

import time
from typing import Callable

import torch


def step_rates(model_name: str, revision: int, classes: int, shape: tuple, batch: int, seconds: float,
               clock: Callable[[], float] = time.perf_counter) -> list[float]:
    """Images/s of each SGD step of ``model_name`` on random inputs, for about ``seconds``
    (the first two steps, warm-up, left out)."""
    from ..models import build_model, builder

    torch.manual_seed(0)
    model = build_model(builder(model_name, revision), classes, shape)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(batch, *shape), torch.randint(0, classes, (batch,))
    rates, start = [], clock()
    while clock() - start < seconds or len(rates) < 5:
        t0 = clock()
        opt.zero_grad(set_to_none=True)
        out = model(x)
        logits = out[0] if isinstance(out, tuple) else out
        torch.nn.functional.cross_entropy(logits, y).backward()
        opt.step()
        rates.append(batch / max(clock() - t0, 1e-9))
        if len(rates) > 1000:
            break
    return rates[2:]


def pilot(configs, seconds: float = 10.0, workers: int | None = None,
          clock: Callable[[], float] = time.perf_counter) -> dict[str, dict]:
    """Per model of ``configs``: this machine's training images/s now for the whole pool
    (``workers`` processes, each at its share of the cores), the quartiles of the step rates
    as the range."""
    from ..sweep.backends import cores, threads_per_worker
    from .estimate import data_facts

    n = workers or cores()
    threads = threads_per_worker(n)
    models = {}
    for c in configs:
        facts = data_facts(c)
        if facts is not None and c.model not in models:
            models[c.model] = (c.model_revision, facts[2], tuple(facts[3]), c.batch_size)
    out, old = {}, torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for model, (rev, classes, shape, batch) in models.items():
            r = sorted(step_rates(model, rev, classes, shape, batch, seconds / max(len(models), 1), clock))
            q1, q3 = r[len(r) // 4], r[(3 * len(r)) // 4]
            out[model] = {"images_s": (q1 * min(n, cores()), q3 * min(n, cores())), "steps": len(r),
                          "workers": n, "threads": threads}
    finally:
        torch.set_num_threads(old)
    return out


def hours_here(plan: dict, measured: dict) -> tuple[float, float] | None:
    """The plan's (``estimate``) training hours on this machine now: (fast, slow) from the
    pilot's range; None when a model of the plan was not measured."""
    fast = slow = 0.0
    for row in plan["models"]:
        m = measured.get(row["model"])
        if m is None:
            return None
        low, high = m["images_s"]
        fast += row["images"] / high / 3600
        slow += row["images"] / low / 3600
    return fast, slow
