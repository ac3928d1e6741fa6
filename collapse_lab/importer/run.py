"""Checkpoints written by other code recorded as one run of a store (``collapse-lab
import``): every file read and checked against the model before anything is written, the
run assembled whole by ``store.whole_run`` (an import that fails leaves nothing)."""
from __future__ import annotations

import math
from pathlib import Path

from ..errors import CollapseLabError
from .files import matched_files, state_of

TRAINING = {"lr": float, "momentum": float, "weight_decay": float, "local_epochs": int, "batch_size": int}


def import_run(src, store, global_pattern: str, client_pattern: str | None = None, key: str | None = None,
               round_: int = 1, dataset: str = "", model: str = "external", normalize: str = "unknown",
               method: str = "fedavg", reg: str = "none", beta: float | None = None, clients: int | None = None,
               alpha: str | None = None, seed: int = 0, settings=(), tag: str = "", data_root=None) -> dict:
    """Read ``src``'s checkpoints (the global model of each round, round 0 the initial model;
    with ``client_pattern`` the clients') and record them as one run of ``store``; the run's
    folder, rounds, clients and the settings it was recorded with. ``settings``: KEY=VALUE
    training settings of the other code (``TRAINING``); ``data_root``: as given by the user."""
    from ..data import DATASETS
    from ..methods import METHODS
    from ..regularizers import REGULARIZERS
    from ..store.whole_run import write_whole_run
    from ..store.recorded import run_config

    src = Path(src)
    DATASETS.get(dataset)  # an unknown data set is one line listing the known
    METHODS.get(method)
    REGULARIZERS.get(reg)
    if round_ < 0:
        raise CollapseLabError(f"--round must be >= 0 (got {round_}; 0 is the initial model)")
    if clients is not None and clients < 1:
        raise CollapseLabError(f"--clients must be >= 1 (got {clients})")
    train = parse_settings(settings)
    globals_, per_round, rounds = matched_files(src, global_pattern, client_pattern, round_)
    found = sorted({k for c in per_round.values() for k in c})
    n_clients = clients or (max(found) + 1 if found else 1)
    if found and max(found) >= n_clients:
        raise CollapseLabError(f"--clients {n_clients}: client {max(found)} was found; give --clients > {max(found)}")
    config = {"dataset": dataset, "model": model, "clients": n_clients, "rounds": rounds[-1], "seed": seed, "tag": tag,
              "partition": "natural" if alpha is None else "dirichlet", "method": method, "reg": reg, **train}
    config.update(_beta_alpha(reg, beta, alpha))
    cfg = run_config(config, normalize, data_root,
                     flags={"normalize": "--normalize", "tag": "--tag", "beta": "--beta", "seed": "--seed",
                            **{k: f"--set {k}" for k in TRAINING}})
    # every file read and checked before anything is written
    fit = model_check(cfg.model, dataset, data_root) or (lambda state, where: state)
    init = fit(state_of(globals_[0], key), str(globals_[0])) if 0 in globals_ else None
    states = {r: fit(state_of(globals_[r], key), str(globals_[r])) for r in rounds}
    client_states = {r: {k: fit(state_of(p, key), str(p)) for k, p in sorted(per_round.get(r, {}).items())}
                     for r in rounds}
    source = {"imported_from": str(src.resolve()), "global": global_pattern, "client": client_pattern}
    final = write_whole_run(store, cfg.run_name(), config, init, {r: (states[r], client_states[r]) for r in states},
                            normalize=cfg.normalize, data_root=data_root, source=source)
    return {"run": str(final), "rounds": ([0] if init is not None else []) + rounds,
            "clients": {r: sorted(c) for r, c in client_states.items() if c}, "model": cfg.model,
            "model_revision": cfg.model_revision, "normalize": cfg.normalize, "method": cfg.method, "reg": cfg.reg}


def _beta_alpha(reg: str, beta, alpha) -> dict:
    from ..config import parse_alpha
    from ..regularizers import default_beta

    out = {"beta": default_beta(reg) if beta is None else beta} if reg != "none" else {}
    return {**out, "alpha": parse_alpha(alpha)} if alpha is not None else out


def parse_settings(settings) -> dict:
    """``--set KEY=VALUE``: the training settings the other code used (``TRAINING``), each
    once, read as every KEY=VALUE option is (``runspec.resolve.parse_key_values``)."""
    from ..runspec.resolve import parse_key_values

    given = parse_key_values(settings, "--set", "lr=0.01")
    out = {}
    for k, v in given.items():
        if k not in TRAINING:
            raise CollapseLabError(f"--set {k}={v}: write KEY=VALUE with KEY one of {', '.join(TRAINING)}")
        want = "an integer" if TRAINING[k] is int else "a number"
        try:  # text JSON does not read as a number (nan, 0x10) is read as Python reads it
            if isinstance(v, bool) or TRAINING[k] is int and isinstance(v, float):
                raise ValueError
            out[k] = TRAINING[k](v)
        except ValueError:
            raise CollapseLabError(f"--set {k}={v}: {v!r} is not {want}") from None
        if not math.isfinite(out[k]):
            raise CollapseLabError(f"--set {k}={v}: not a finite number; give a finite number")
    return out


def _problems(state: dict, expected: dict) -> list[str]:
    """Why ``state`` does not load strictly into a model of parameter shapes ``expected``:
    the names missing, unexpected and of another shape (each count with its first three)."""
    missing = [k for k in expected if k not in state]
    extra = [k for k in state if k not in expected]
    shapes = [f"{k} {tuple(state[k].shape)} (the model's {expected[k]})" for k in expected
              if k in state and tuple(state[k].shape) != expected[k]]
    out = []
    for what, keys in (("missing", missing), ("unexpected", extra), ("of another shape", shapes)):
        if keys:
            out.append(f"{len(keys)} {what}: {', '.join(keys[:3])}{', ...' if len(keys) > 3 else ''}")
    return out


def model_check(model: str, dataset: str, data_root=None):
    """``fit(state, where) -> state``: the state under the registry model's own names, checked
    to load strictly (every name, every shape); None for a model outside the registry (its
    factory is named at analysis time). Names of the model's other code (the released
    FedDecorr ResNets' ``layer1.0.``) are read through the model's ``foreign_names``."""
    from ..data import DATASETS
    from ..models import MODELS, build_model

    if model not in MODELS:
        return None
    info = DATASETS.info(dataset)
    shape, classes = info.get("shape"), info.get("classes")
    if shape is None or classes is None:
        from ..data import load_dataset
        from ..data_root import default_data_root

        try:
            ds = load_dataset(dataset, data_root=default_data_root(data_root)[0])
        except CollapseLabError as e:
            raise CollapseLabError(f"--model {model}: to check the checkpoints against it the data set {dataset} "
                                   f"must be readable ({e}); give --data-root") from None
        shape, classes = ds.input_shape, ds.num_classes
    expected = {k: tuple(v.shape) for k, v in build_model(model, classes, shape).state_dict().items()}
    rename = MODELS.info(model).get("foreign_names")

    def problems(state: dict) -> list[str]:
        return _problems(state, expected)

    def fit(state: dict, where: str) -> dict:
        bad = problems(state)
        if not bad:
            return state
        note = ""
        if rename is not None:
            renamed = {rename(k): v for k, v in state.items()}
            if len(renamed) == len(state):
                again = problems(renamed)
                if not again:
                    return renamed
                if sum(int(b.split()[0]) for b in again) < sum(int(b.split()[0]) for b in bad):
                    bad, note = again, " (its names read as the model's other code's, e.g. layer1.0. -> layers.0.)"
        raise CollapseLabError(f"{where} does not load into --model {model} ({dataset}, {classes} classes){note}: "
                               f"{'; '.join(bad)}; name the model it was trained with")

    return fit
