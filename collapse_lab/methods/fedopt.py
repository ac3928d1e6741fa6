"""FedOpt (Reddi et al. 2021, "Adaptive Federated Optimization", Alg. 2): clients train as
in FedAvg; the server treats x - avg_k x_k as a pseudo-gradient and steps with an adaptive
optimizer (``aggregate.server_opt_step``): ``fedadam``, ``fedyogi``, ``fedadagrad``.
FedAvgM is the same with heavy-ball momentum (``fedavgm``, kind ``sgdm``).

``fedopt`` is the name FedETF's Tables 1-2 use; the paper does not say which server
optimizer or settings, so it is FedAdam here.

Defaults (none of the five papers states them; these are Reddi et al.'s CIFAR-10 choices
as we read their App. D): server lr 1e-2 for Adam and Yogi, 1e-1 for Adagrad (``LR``),
beta1 0.9, beta2 0.99, tau 1e-3. Moments cover the trainable parameters (float64, server
state); BatchNorm statistics are averaged.
"""
from __future__ import annotations

from .aggregate import server_opt_step
from . import METHODS, Method, fedavg_of, trainable_names

LR = {"adam": 1e-2, "yogi": 1e-2, "adagrad": 1e-1}


class FedOpt(Method):
    kind = "adam"
    server_copies = 4.0  # float64 m and v
    capturable = True
    # tau: the adaptivity (v starts at tau^2)
    bounds = {"server_lr": "> 0", "beta1": "[0, 1)", "beta2": "[0, 1)", "tau": "> 0"}


    def __init__(self, cfg, model, num_clients):
        super().__init__(cfg, model, num_clients)
        self.keys = trainable_names(model)
        self.moments = None

    def aggregate(self, r, global_state, results):
        o = self.opts
        new, self.moments = server_opt_step(global_state, fedavg_of(results), self.moments, self.keys, self.kind,
                                            o["server_lr"], o["beta1"], o["beta2"], o["tau"])
        return new

    def server_state(self):
        return {f"{which}/{k}": t for which, d in (self.moments or {}).items() for k, t in d.items()}

    def load_state(self, server, clients):
        out: dict = {}
        for key, t in server.items():
            which, name = key.split("/", 1)
            out.setdefault(which, {})[name] = t
        self.moments = out or None


def _register(name: str, kind: str):
    cls = type(f"Fed{kind.capitalize()}_{name}", (FedOpt,), {
        "kind": kind, "defaults": {"server_lr": LR[kind], "beta1": 0.9, "beta2": 0.99, "tau": 1e-3},
        "__doc__": f"FedOpt with the server optimizer {kind} (Reddi et al. 2021, Alg. 2)."})
    return METHODS.register(name)(cls)


FedAdam = _register("fedadam", "adam")
FedYogi = _register("fedyogi", "yogi")
FedAdagrad = _register("fedadagrad", "adagrad")
FedOptAdam = _register("fedopt", "adam")
