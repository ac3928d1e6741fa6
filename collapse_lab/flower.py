"""Record a Flower run into a collapse-lab store (docs/flower.md): the initial and every
round's global model, every client's returned parameters, Flower's own evaluation, so that
``spectrum``, ``compare``, ``cka`` and ``report`` analyse it. Needs the ``flower`` extra
(``pip install 'collapse-lab[flower]'``).

Flower's Message API strategies (``flwr.serverapp.strategy``) aggregate the clients'
replies in ``aggregate_train`` and ``aggregate_evaluate``; ``record`` wraps those methods
and ``start`` of any strategy instance::

    strategy = record(FedAvg(...), RunWriter("checkpoints", {...}, normalize="0.5/0.5"))
    strategy.start(grid=grid, initial_arrays=..., num_rounds=5, evaluate_fn=global_evaluate)

A client is identified by the ``partition-id`` its reply's metrics carry (one line in the
ClientApp: ``context.node_config["partition-id"]``), else by its node id in ascending
order. That key, and a client's ``label-counts`` (its partition's count of each class),
are taken out of the reply before the strategy aggregates it: no strategy averages an id.
A round is written once its evaluations are in (Flower evaluates after aggregating): its
``test_acc`` is the server-side ``evaluate_fn``'s ``accuracy``, else the clients'
aggregated ``eval_acc``/``accuracy``, and the event says which. Nothing of Flower is
imported at collapse-lab's import time.
"""
from __future__ import annotations

from typing import Callable

from .errors import CollapseLabError
from .store.writer import RunWriter

CLIENT_KEYS = ("partition-id", "label-counts")  # per-client facts, never aggregated


def _numbers(record) -> dict:
    return {k: v for k, v in dict(record or {}).items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


class _Later:
    """A RunWriter to open once the number of clients is known (``record(strategy, STORE, config)``)."""

    def __init__(self, store, config: dict, kwargs: dict):
        from .store.recorded import run_config

        if not isinstance(config, dict):
            raise CollapseLabError("flower record: give the run's options as a dict (record(strategy, STORE, {...}))")
        # checked now, before Flower trains anything (the clients' count stands in until the grid says it)
        run_config({"clients": 1, **config}, kwargs.get("normalize"), kwargs.get("data_root"))
        self.store, self.config, self.kwargs = store, dict(config), kwargs

    def open(self, clients: int) -> RunWriter:
        return RunWriter(self.store, {**self.config, "clients": self.config.get("clients", clients)}, **self.kwargs)


class _Recorder:
    def __init__(self, writer, client_of, metrics_key: str, id_key: str, accuracy_key: str):
        self.later = writer if isinstance(writer, _Later) else None
        self.writer = None if self.later else writer
        self.client_of, self.metrics_key = client_of, metrics_key
        self.id_key, self.accuracy_key = id_key, accuracy_key
        self.order: dict[int, int] = {}
        self.pending: dict | None = None  # the last aggregated round, written once its evaluations are in
        self.sizes: dict[int, int] = {}
        self.counts: dict[int, list] = {}
        self.in_start = False
        self.grid = None
        self.initial: dict | None = None  # start's initial arrays, until the writer opens
        self.round0: dict | None = None  # evaluate_fn's numbers of the initial model (round 0)

    def nodes(self) -> int | None:
        """How many SuperNodes Flower's grid has (None: no grid seen)."""
        if self.grid is None:
            return None
        try:
            return len(list(self.grid.get_node_ids()))
        except Exception:  # noqa: BLE001 -- a grid of another kind: the replies tell
            return None

    def open(self, seen: list[int]) -> None:
        """The writer, once round 1's replies are in: the clients are the grid's SuperNodes
        (or the highest client index replied, if more), unless the config names them; then
        what waited (round 0's model and evaluation) is written."""
        n = max([self.nodes() or 0, *(k + 1 for k in seen)]) or None
        if self.writer is None:
            self.writer = self.later.open(n or 1)
        elif n is not None and self.writer.config.clients != n and self.nodes() is not None:
            raise CollapseLabError(f"flower record: the RunWriter's config says clients {self.writer.config.clients}, "
                                   f"Flower's grid has {self.nodes()} SuperNode(s) (flwr simulates 2 by default); leave "
                                   "clients out and call record(strategy, STORE, config) to take the grid's count")
        w = self.writer
        if self.initial is not None and w.next_round == 1 and not w.run.has_global(0):
            w.write_initial(self.initial)
        if self.round0 is not None and w.next_round == 1:
            w.log_initial_metrics(self.round0)
        self.initial = self.round0 = None

    def client(self, msg) -> int:
        if self.client_of is not None:
            return int(self.client_of(msg))
        metrics = msg.content.get(self.metrics_key) if hasattr(msg.content, "get") else None
        if metrics is not None and self.id_key in metrics:
            return int(metrics[self.id_key])
        node = int(msg.metadata.src_node_id)
        return self.order.setdefault(node, len(self.order))

    def take_client_facts(self, k: int, msg) -> None:
        metrics = msg.content.get(self.metrics_key) if hasattr(msg.content, "get") else None
        if metrics is None:
            return
        if "num-examples" in metrics:
            self.sizes[k] = int(metrics["num-examples"])
        if "label-counts" in metrics:
            self.counts[k] = [int(c) for c in metrics["label-counts"]]
        for key in (self.id_key, *CLIENT_KEYS):
            if key in metrics:
                del metrics[key]

    def flush(self) -> None:
        p, self.pending = self.pending, None
        if p is None:
            return
        metrics = {"train_metrics": p["train"]}
        if p.get("eval") is not None:
            metrics["eval_metrics"] = p["eval"]
        if p.get("server") is not None:
            metrics["server_eval"] = p["server"]
        metrics.update(self.accuracy(p.get("server"), p.get("eval")))
        w = self.writer
        w.write_round(p["round"], p["arrays"], p["clients"], metrics)
        self.note_clients()
        if p["round"] >= w.config.rounds:
            w.close()

    def accuracy(self, server: dict | None, clients: dict | None) -> dict:
        """A round's ``test_acc`` (and ``test_loss``): the server-side ``evaluate_fn``'s
        accuracy, else the clients' aggregated one, with ``test_acc_from`` saying which."""
        for source, rec, keys in (("server evaluate_fn", server, (self.accuracy_key,)),
                                  ("clients' evaluation", clients, ("eval_acc", self.accuracy_key))):
            acc = next((rec[k] for k in keys if rec and k in rec), None)
            if acc is not None:
                out = {"test_acc": float(acc), "test_acc_from": source}
                loss = next((rec[k] for k in ("loss", "eval_loss") if k in rec), None)
                return out if loss is None else {**out, "test_loss": float(loss)}
        return {}

    def note_clients(self) -> None:
        n = self.writer.config.clients
        meta = self.writer.run.meta
        facts = {}
        if meta.get("client_sizes") is None and sorted(self.sizes) == list(range(n)):
            facts["client_sizes"] = [self.sizes[k] for k in range(n)]
        if meta.get("client_label_counts") is None and sorted(self.counts) == list(range(n)):
            facts["client_label_counts"] = [self.counts[k] for k in range(n)]
        if facts:
            self.writer.note(**facts)


def record(strategy, writer, config: dict | None = None, client_of: Callable | None = None,
           metrics_key: str = "metrics", id_key: str = "partition-id", accuracy_key: str = "accuracy",
           **writer_options):
    """``strategy`` (a ``flwr.serverapp.strategy`` instance) whose every round is also
    written to a run: each client's returned arrays, the aggregate, the aggregated train
    and evaluation metrics, the server-side ``evaluate_fn``'s metrics (round 0's too);
    ``start``'s initial arrays become round 0.

    ``record(strategy, STORE, config, normalize=..., source=...)``: the run is opened once
    round 1's replies are in, with as many clients as Flower's grid has SuperNodes (no count
    to declare; ``config["clients"]`` overrides it); ``writer_options`` go to ``RunWriter``.
    ``record(strategy, RunWriter(...))``: a writer of your own, whose ``clients`` must then
    equal the grid's SuperNodes. ``client_of(message) -> int`` overrides how a reply's client
    index is found. Returns the same strategy; the run is closed after its last round."""
    if not isinstance(writer, RunWriter):
        writer = _Later(writer, config if config is not None else {}, writer_options)
    elif config is not None or writer_options:
        raise CollapseLabError("flower record: with a RunWriter, give its options to RunWriter(...), not to record")
    w = _Wrapped(_Recorder(writer, client_of, metrics_key, id_key, accuracy_key), strategy)
    strategy.aggregate_train, strategy.aggregate_evaluate, strategy.start = w.aggregate_train, w.aggregate_evaluate, w.start
    return strategy


class _Wrapped:
    """The strategy's ``aggregate_train``, ``aggregate_evaluate`` and ``start``, each handing
    what passes through to the recorder before (or after) calling the strategy's own."""

    def __init__(self, rec: "_Recorder", strategy):
        self.rec = rec
        self.inner_train, self.inner_eval, self.inner_start = (strategy.aggregate_train, strategy.aggregate_evaluate,
                                                               strategy.start)
        self.key = getattr(strategy, "arrayrecord_key", "arrays")

    def aggregate_train(self, server_round: int, replies):
        rec = self.rec
        rec.flush()  # the previous round's evaluations are all in
        replies = list(replies)
        clients = {}
        for msg in replies:
            if msg.has_error():
                continue
            k = rec.client(msg)
            if k in clients:
                raise CollapseLabError(f"flower record: two replies of round {server_round} are client {k}; give "
                                       "client_of=... to tell them apart")
            rec.take_client_facts(k, msg)
            clients[k] = msg.content[self.key].to_torch_state_dict()
        arrays, metrics = self.inner_train(server_round, replies)
        if arrays is not None:
            if rec.writer is None or rec.grid is not None and rec.writer.next_round == 1:
                rec.open(sorted(clients))
            rec.pending = {"round": server_round, "arrays": arrays.to_torch_state_dict(), "clients": clients,
                           "train": _numbers(metrics)}
            if not rec.in_start:  # a loop of the user's own: nothing tells when evaluation ends
                rec.flush()
        return arrays, metrics

    def aggregate_evaluate(self, server_round: int, replies):
        metrics = self.inner_eval(server_round, replies)
        rec = self.rec
        if rec.pending is not None and rec.pending["round"] == server_round and metrics is not None:
            rec.pending["eval"] = _numbers(metrics)
        return metrics

    def start(self, *args, **kwargs):
        import inspect

        rec = self.rec
        bound = inspect.signature(self.inner_start).bind(*args, **kwargs)
        initial, fn = bound.arguments.get("initial_arrays"), bound.arguments.get("evaluate_fn")
        rec.grid = bound.arguments.get("grid")
        if initial is not None:  # round 0, written when the run opens (round 1's replies tell the clients)
            rec.initial = initial.to_torch_state_dict()
        if fn is not None:
            bound.arguments["evaluate_fn"] = lambda server_round, arrays: self.evaluated(fn, server_round, arrays)
        rec.in_start = True
        try:
            return self.inner_start(*bound.args, **bound.kwargs)
        finally:
            rec.in_start = False
            rec.flush()  # the last round (or the last complete one, when Flower stopped early)

    def evaluated(self, fn, server_round, arrays):
        """The server-side ``evaluate_fn``, its metrics kept for the round (round 0: the initial model)."""
        rec = self.rec
        res = fn(server_round, arrays)
        if res is not None and server_round == 0:  # Flower evaluates the initial model first
            rec.round0 = {"server_eval": _numbers(res), **rec.accuracy(_numbers(res), None)}
            if rec.writer is not None and rec.writer.next_round == 1:  # a writer of the user's: now
                rec.writer.log_initial_metrics(rec.round0)
                rec.round0 = None
        elif res is not None and rec.pending is not None and rec.pending["round"] == server_round:
            rec.pending["server"] = _numbers(res)
        return res

