"""FedAvgM (Hsu et al. 2019): FedAvg with server momentum on the aggregated update, the
momentum case of FedOpt (``aggregate.server_opt_step`` kind ``sgdm``, exactly Alg. 1 of
Hsu et al.: v <- rho v + (x - avg), x <- x - lr v).
Paper defaults (FedDecorr App. F): server momentum rho = 0.5, server learning rate 1."""
from __future__ import annotations

from .aggregate import server_opt_step
from . import METHODS, Method, fedavg_of, trainable_names


@METHODS.register("fedavgm")
class FedAvgM(Method):
    server_copies = 2.0  # float64 velocity
    defaults = {"server_momentum": 0.5, "server_lr": 1.0}
    bounds = {"server_momentum": "[0, 1)", "server_lr": "> 0"}
    capturable = True


    def __init__(self, cfg, model, num_clients):
        super().__init__(cfg, model, num_clients)
        # Momentum acts on the parameters; BatchNorm statistics are averaged as in FedAvg
        # (a running variance pushed by momentum could turn negative).
        self.keys = trainable_names(model)
        self.velocity = None

    def aggregate(self, r, global_state, results):
        new, moments = server_opt_step(global_state, fedavg_of(results), self.velocity and {"m": self.velocity},
                                       self.keys, "sgdm", self.opts["server_lr"], beta1=self.opts["server_momentum"])
        self.velocity = moments["m"]
        return new

    def server_state(self):
        return {f"velocity/{k}": v for k, v in (self.velocity or {}).items()}

    def load_state(self, server, clients):
        v = {k.split("/", 1)[1]: t for k, t in server.items() if k.startswith("velocity/")}
        self.velocity = v or None
