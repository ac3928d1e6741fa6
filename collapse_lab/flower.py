"""Record a Flower run into a collapse-lab store (docs/flower.md): the global model and
every client's returned parameters each round, so that ``spectrum``, ``compare``, ``cka``
and ``report`` analyse it. Needs the ``flower`` extra (``pip install 'collapse-lab[flower]'``).

Flower's Message API strategies (``flwr.serverapp.strategy``) aggregate the clients'
replies in ``aggregate_train``; ``record`` wraps that method of any strategy instance::

    from collapse_lab.flower import record
    from collapse_lab import RunWriter

    strategy = record(FedAvg(...), RunWriter("checkpoints", {"dataset": "digits", "model": "mlp",
                                                             "clients": 3, "rounds": 5}))
    strategy.start(grid=grid, initial_arrays=..., num_rounds=5)

A client is identified by the ``partition-id`` its reply's metrics carry (Flower's
simulation gives each node one in ``context.node_config``), else by its node id in
ascending order. Nothing of Flower is imported at collapse-lab's import time.
"""
from __future__ import annotations

from typing import Callable

from .errors import CollapseLabError
from .store.writer import RunWriter


def _client_index(msg, metrics_key: str, order: dict) -> int:
    metrics = msg.content.get(metrics_key) if hasattr(msg.content, "get") else None
    if metrics is not None and "partition-id" in metrics:
        return int(metrics["partition-id"])
    node = int(msg.metadata.src_node_id)
    return order.setdefault(node, len(order))


def record(strategy, writer: RunWriter, client_of: Callable | None = None, metrics_key: str = "metrics"):
    """``strategy`` (a ``flwr.serverapp.strategy`` instance) whose every aggregation also
    writes the round to ``writer``: each client's returned arrays, then the aggregate, with
    the aggregated train metrics. ``client_of(message) -> int`` overrides how a reply's
    client index is found. Returns the same strategy; the writer is closed after the last
    round of ``writer.config.rounds``."""
    inner = strategy.aggregate_train
    key = getattr(strategy, "arrayrecord_key", "arrays")
    order: dict[int, int] = {}

    def aggregate_train(server_round: int, replies):
        replies = list(replies)
        clients = {}
        for msg in replies:
            if msg.has_error():
                continue
            k = client_of(msg) if client_of is not None else _client_index(msg, metrics_key, order)
            if k in clients:
                raise CollapseLabError(f"flower record: two replies of round {server_round} are client {k}; give "
                                       "client_of=... to tell them apart")
            clients[k] = msg.content[key].to_torch_state_dict()
        arrays, metrics = inner(server_round, replies)
        if arrays is not None:
            numbers = {k: float(v) for k, v in dict(metrics or {}).items() if isinstance(v, (int, float))}
            writer.write_round(server_round, arrays.to_torch_state_dict(), clients, {"train_metrics": numbers})
            if server_round >= writer.config.rounds:
                writer.close()
        return arrays, metrics

    strategy.aggregate_train = aggregate_train
    return strategy
