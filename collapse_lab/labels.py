"""The one labeller: how a run, a configuration or a group of runs is named in legends,
tables and messages, in the papers' words (FedAvg + FedDecorr, alpha = 0.05, M = 2)."""
from __future__ import annotations

from .config import current_form

PRETTY_METHOD = {"fedavg+etf": "FedAvg + ETF", "fedavg+etf+gmv": "FedAvg + ETF + GMV", "fedavg": "FedAvg",
                 "fedavgm": "FedAvgM", "fedprox": "FedProx", "moon": "MOON", "scaffold": "SCAFFOLD",
                 "fednova": "FedNova", "fedbn": "FedBN", "fedetf": "FedETF"}
PRETTY_REG = {"none": "", "feddecorr": "FedDecorr", "decov": "DeCov", "structured-decov": "Structured DeCov",
              "feduv": "FedUV"}


def _short(v) -> str:
    if isinstance(v, dict):
        return "{" + ",".join(f"{a}={b}" for a, b in sorted(v.items())) + "}"
    return f"{v:g}" if isinstance(v, float) else str(v)


def alpha_label(v) -> str:
    """The Dirichlet alpha as every legend, title and table writes it: α = 0.05, α = ∞."""
    v = str(v)
    return "α = ∞" if v in ("inf", "infinity") else f"α = {v}"


def label(key: dict, dicts: bool = False) -> str:
    """A legend label for the fields in ``key`` (field -> value): FedAvg / +FedDecorr,
    alpha = 0.05, M = 2, ... Option dictionaries are left out unless ``dicts`` (the
    catalogue names FedETF's parts by its options)."""
    parts = []
    method, reg = key.get("method"), key.get("reg")
    opts = key.get("method_options")
    if method == "fedetf" and isinstance(opts, dict):  # FedETF Fig. 5's names for its parts
        method = "fedavg+etf" if float(opts.get("gmv_weight", 0.5)) == 0 else "fedavg+etf+gmv"
    if method is not None or reg is not None:
        name = PRETTY_METHOD.get(method, method) if method is not None else ""
        if reg not in (None, "none"):
            name = f"{name} + {PRETTY_REG.get(reg, reg)}" if name else f"+{PRETTY_REG.get(reg, reg)}"
        elif not name:
            name = "FedAvg" if reg == "none" else ""
        parts.append(name)
    for k, v in key.items():
        if k in ("method", "reg") or (isinstance(v, dict) and not dicts) or (k == "method_options" and not dicts):
            continue
        if k == "alpha":
            parts.append(alpha_label(v))
        elif k == "classes_per_client":
            parts.append(f"M = {v}")
        elif k == "beta":
            parts.append(f"β = {v:g}")
        elif k == "decorr_norm":
            parts.append(f"{v} scaling")
        else:
            parts.append(f"{k} = {_short(v)}")
    return ", ".join(p for p in parts if p) or "run"


def partition_text(meta: dict) -> str:
    """A run's split in a few characters (``meta``: its run.json): dir 0.05, M=2, scenes M=3,
    or the partition's name, with the partition's own options."""
    from .partition import takes  # the registry loads torch: only when a label is drawn

    p = meta.get("partition") or ""
    short = {"dirichlet": "dir", "pathological": ""}.get(p, p)  # the papers' shorthands; else the name
    bits = [short] if short else []
    if takes(p, "alpha"):  # what the partition takes, not what it is called
        bits.append(str(meta.get("alpha")))
    if takes(p, "classes_per_client"):
        bits.append(f"M={meta.get('classes_per_client')}")
    text = " ".join(bits)
    if meta.get("partition_options"):  # a partition's own options (declared in its file)
        text += " " + " ".join(f"{k}={v}" for k, v in sorted(meta["partition_options"].items()))
    return text


def reg_text(meta: dict) -> str:
    """The regularizer and its weight (feddecorr 0.1 (official) for the released scaling)."""
    if meta.get("reg") in (None, "none"):
        return "none"
    text = f"{meta.get('reg')} {meta.get('beta')}"
    if meta.get("reg") == "feddecorr" and (current_form(meta).get("reg_options") or {}).get("normalization") == "official":
        text += " (official)"  # the released code's scaling: otherwise two runs would read alike
    return text


def describe(meta: dict) -> str:
    """One run in a title: its split, then method and regularizer where not plain FedAvg
    (α = 0.05 + feddecorr, M=2 moon)."""
    part = alpha_label(meta.get("alpha")) if meta.get("partition") == "dirichlet" else partition_text(meta)
    method = "" if meta.get("method") == "fedavg" else f" {meta.get('method')}"
    extra = "" if meta.get("reg") in (None, "none") else f" + {meta.get('reg')}"
    return f"{part}{method}{extra}"
