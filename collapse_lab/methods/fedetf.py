"""FedETF (Li et al. 2023, "Neural Collapse Inspired Federated Learning with Non-iid Data"):
FedAvg with a fixed simplex-ETF classifier (Sec. 4.1, Eq. 3) and the global memory vectors
(Sec. 4.2, Alg. 1), both on by default. The two parts are add-ons any method takes
(``addons.py``, where they are defined); this is the paper's shorthand for FedAvg + both.

Defaults: ``etf_scale`` 1.0 (the paper's "ETF" setting), ``gmv_weight`` 0.5 (paper advice:
[0.5, 1]), ``gmv_warmup`` half the rounds (paper: 500 of 1000 or later). ``gmv_weight=0``
keeps the classifier fixed and the memory vectors computed but unused (the "ETF" rows).
"""
from __future__ import annotations

from . import METHODS
from .fedavg import FedAvg


@METHODS.register("fedetf")
class FedETF(FedAvg):
    defaults = {"etf_scale": 1.0, "gmv_weight": 0.5, "gmv_warmup": None}
    int_options = frozenset({"gmv_warmup"})
    capturable = False  # the memory vectors enter through local hooks
