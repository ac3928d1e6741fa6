"""``collapse-lab import``: turn per-round PyTorch checkpoints written by other code into a
run of a store (``store.writer``), so that every analysis reads them.

Files are read with ``torch.load(weights_only=True)``: tensors and plain containers only;
a checkpoint that needs arbitrary code to unpickle is refused, never run. Every file is read
and checked against the model before anything is written, and the run is assembled in a
temporary folder of the store and renamed into place: an import that fails leaves nothing.
"""
from __future__ import annotations

import json
import math
import os
import stat
import re
from pathlib import Path

import click

from .options import store_option
from ..errors import CollapseLabError
from .common import data_root_option, given_data_root

PLACE = {"round": r"(?P<round>\d+)", "client": r"(?P<client>\d+)"}


def state_of(path: Path, key: str | None) -> dict:
    """The state dict in a checkpoint file: the file itself when it is one (name -> tensor),
    else the entry ``key`` of it (``a.b`` for a nested one), else its ``state_dict``/``model`` entry."""
    import torch

    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except KeyboardInterrupt:
        raise
    except Exception as e:  # noqa: BLE001 (any file: a zip of other things, text, a truncated pickle)
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CollapseLabError(f"{path}: not a checkpoint of tensors that loads without running code "
                               f"({first.split('. ')[0][:120]}); save model.state_dict() with torch.save") from None
    for part in (key.split(".") if key else []):
        if not isinstance(obj, dict) or part not in obj:
            raise CollapseLabError(f"{path}: no entry {part!r} (--key {key}); it has: "
                                   f"{', '.join(map(str, obj)) if isinstance(obj, dict) else type(obj).__name__}")
        obj = obj[part]
    if isinstance(obj, dict) and obj and not all(isinstance(v, torch.Tensor) for v in obj.values()) and not key:
        for name in ("state_dict", "model", "net"):
            if isinstance(obj.get(name), dict):
                obj = obj[name]
                break
    if not isinstance(obj, dict) or not obj or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                                       for k, v in obj.items()):
        raise CollapseLabError(f"{path}: holds no state dict (name -> tensor); name the entry that does with --key")
    return dict(obj)


def entries_under(src: Path) -> list[tuple[Path, str]]:
    """Every entry under ``src`` with its kind (``file``, ``link``, ``folder``, ``other``:
    a FIFO, a socket, a device), following symbolic links to folders (each real folder once)."""
    out, seen = [], set()
    for root, dirs, files in os.walk(src, followlinks=True):
        real = os.path.realpath(root)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        for name in files:
            p = Path(root) / name
            kind = "link" if p.is_symlink() else "file" if stat.S_ISREG(os.lstat(p).st_mode) else "other"
            out.append((p, kind))
        out += [(Path(root) / d, "folder") for d in dirs]
    return sorted(out, key=lambda t: t[0].relative_to(src).as_posix())


def find(src: Path, pattern: str, flag: str) -> list[tuple[dict, Path]]:
    """Files under ``src`` matching ``pattern`` (``{round}``, ``{client}`` placeholders; ``*``
    as in a shell), with the numbers the placeholders took. What the import would otherwise
    drop is refused, naming the files: a match that is a link, a folder, a FIFO or another
    non-file, and two files for one round (and client), e.g. ``round_1/`` and ``round_01/``."""
    rx = re.escape(pattern).replace(r"\*", "[^/]*")
    for k, v in PLACE.items():
        rx = rx.replace(re.escape("{" + k + "}"), v)
    out, by_key = [], {}
    for p, kind in entries_under(src):
        m = re.fullmatch(rx, p.relative_to(src).as_posix())
        if not m:
            continue
        if kind != "file":
            what = {"link": "a symbolic link (import reads real files: copy the target in)",
                    "folder": "a folder", "other": "not a regular file (a FIFO, socket or device)"}[kind]
            raise CollapseLabError(f"{flag} {pattern}: {p} matches but is {what}; nothing was imported")
        key = {k: int(v) for k, v in m.groupdict().items()}
        ident = tuple(sorted(key.items()))
        if ident and ident in by_key:  # no placeholder: the caller names the files matched
            raise CollapseLabError(f"{flag} {pattern}: two files for {', '.join(f'{k} {v}' for k, v in ident) or 'one run'}: "
                                   f"{by_key[ident]} and {p}; remove one; nothing was imported")
        by_key[ident] = p
        out.append((key, p))
    return out


def model_check(model: str, dataset: str):
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
            ds = load_dataset(dataset, data_root=default_data_root(given_data_root())[0])
        except CollapseLabError as e:
            raise CollapseLabError(f"--model {model}: to check the checkpoints against it the data set {dataset} "
                                   f"must be readable ({e}); give --data-root") from None
        shape, classes = ds.input_shape, ds.num_classes
    expected = {k: tuple(v.shape) for k, v in build_model(model, classes, shape).state_dict().items()}
    rename = MODELS.info(model).get("foreign_names")

    def problems(state: dict) -> list[str]:
        missing = [k for k in expected if k not in state]
        extra = [k for k in state if k not in expected]
        shapes = [f"{k} {tuple(state[k].shape)} (the model's {expected[k]})" for k in expected
                  if k in state and tuple(state[k].shape) != expected[k]]
        out = []
        for what, keys in (("missing", missing), ("unexpected", extra), ("of another shape", shapes)):
            if keys:
                out.append(f"{len(keys)} {what}: {', '.join(keys[:3])}{', ...' if len(keys) > 3 else ''}")
        return out

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


TRAINING = {"lr": float, "momentum": float, "weight_decay": float, "local_epochs": int, "batch_size": int}


@click.command("import")
@click.argument("src", type=click.Path(file_okay=False, exists=True))
@store_option()
@click.option("--global", "global_pattern", required=True, metavar="PATTERN",
              help="The global models' files under SRC, e.g. 'round_{round}/global.pt' (round 0: the initial model) "
                   "or 'globalmodel_*.pth' (no {round}: one checkpoint, numbered --round).")
@click.option("--client", "client_pattern", metavar="PATTERN",
              help="The clients' files, e.g. 'round_{round}/client_{client}.pt' or 'localmodel{client}_*.pth'.")
@click.option("--key", default=None, help="Entry of each file that holds the state dict (a.b for nested).")
@click.option("--round", "round_", type=int, default=1, show_default=True,
              help="The round of checkpoints whose pattern has no {round}.")
@click.option("--dataset", required=True, help="The data set the run trained on (a registry name).")
@click.option("--model", default="external", show_default=True,
              help="Registry name of the model (its checkpoints are checked to load strictly; resnet20/resnet32 also "
                   "read the released FedDecorr code's names), or a name of your own with --model-factory at analysis.")
@click.option("--normalize", default="unknown", show_default=True, metavar="MEAN/STD",
              help="The input normalisation the model was trained with, on inputs scaled to [0, 1] (e.g. 0.5/0.5, "
                   "or per channel 0.4914,0.4822,0.4465/0.247,0.2435,0.2616; dataset: collapse-lab's; none).")
@click.option("--method", default="fedavg", show_default=True, help="The federated method the run trained with.")
@click.option("--reg", default="none", show_default=True, help="The regularizer it trained with (e.g. feddecorr).")
@click.option("--beta", type=float, default=None, help="The regularizer's weight (default: the regularizer's).")
@click.option("--clients", type=int, default=None, help="Clients of the run (default: the clients found).")
@click.option("--alpha", default=None, help="Dirichlet alpha of the run's split, where known.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE",
              help="A training setting it used, recorded in run.json: lr, momentum, weight_decay, local_epochs, "
                   "batch_size (repeatable; those not given are recorded as unknown).")
@click.option("--tag", default="", help="Suffix for the run folder name.")
@click.option("--json", "as_json", is_flag=True, help="Print the imported run as JSON on stdout.")
@data_root_option
def import_cmd(src, store, global_pattern, client_pattern, key, round_, dataset, model, normalize, method, reg, beta,
               clients, alpha, seed, settings, tag, as_json):
    """Read SRC's checkpoints (torch.load with weights_only=True: tensors only) and record
    them as one run of --store: the global model of each round (round 0: the initial model)
    and, with --client, the clients' models. Nothing is written unless every file reads and
    loads into --model."""
    from ..data import DATASETS
    from ..methods import METHODS
    from ..regularizers import REGULARIZERS
    from ..store.writer import run_config

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
    data_root = given_data_root()  # what this command was given, recorded
    cfg = run_config(config, normalize, data_root,
                     flags={"normalize": "--normalize", "tag": "--tag", "beta": "--beta", "seed": "--seed",
                            **{k: f"--set {k}" for k in TRAINING}})
    # every file read and checked before anything is written
    fit = model_check(cfg.model, dataset) or (lambda state, where: state)
    init = fit(state_of(globals_[0], key), str(globals_[0])) if 0 in globals_ else None
    states = {r: fit(state_of(globals_[r], key), str(globals_[r])) for r in rounds}
    client_states = {r: {k: fit(state_of(p, key), str(p)) for k, p in sorted(per_round.get(r, {}).items())}
                     for r in rounds}
    source = {"imported_from": str(src.resolve()), "global": global_pattern, "client": client_pattern}
    final = write_run(store, cfg, config, init, states, client_states, source, data_root)
    out = {"run": str(final), "rounds": ([0] if init is not None else []) + rounds,
           "clients": {r: sorted(c) for r, c in client_states.items() if c}, "model": cfg.model,
           "model_revision": cfg.model_revision, "normalize": cfg.normalize, "method": cfg.method, "reg": cfg.reg}
    if as_json:
        click.echo(json.dumps(out, indent=1))
    else:
        click.echo(f"imported {len(rounds)} round(s) of {src} into {final}"
                   + (" with the initial model (round 0)" if init is not None else ""))


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


def matched_files(src: Path, global_pattern: str, client_pattern, round_: int):
    """The global models' files by round, the clients' by round and client, and the rounds
    after the initial model; a pattern that matches nothing usable is one line."""
    globals_ = {(m.get("round", round_)): p for m, p in find(src, global_pattern, "--global")}
    if not globals_:
        raise CollapseLabError(f"--global {global_pattern}: no file under {src} matches it")
    if "{round}" not in global_pattern and len(globals_) > 1:
        raise CollapseLabError(f"--global {global_pattern} matches {len(globals_)} files; put {{round}} where the "
                               "round number is, or name one file")
    per_round: dict[int, dict[int, Path]] = {}
    for m, p in find(src, client_pattern, "--client") if client_pattern else []:
        if "client" not in m:
            raise CollapseLabError(f"--client {client_pattern}: put {{client}} where the client number is")
        per_round.setdefault(m.get("round", round_), {})[m["client"]] = p
    rounds = sorted(r for r in globals_ if r > 0)
    if not rounds:
        raise CollapseLabError(f"--global {global_pattern}: only the initial model (round 0) under {src}; a run "
                               "needs the global model of at least one round")
    orphans = sorted(set(per_round) - set(globals_))
    if orphans:
        raise CollapseLabError(f"--client {client_pattern}: clients of round {orphans[0]}, which has no global model "
                               f"(--global {global_pattern})")
    return globals_, per_round, rounds


def write_run(store, cfg, config: dict, init, states: dict, client_states: dict, source: dict, data_root) -> Path:
    """Record the checked states as one run of the store (``store.whole_run``: nothing
    half-written)."""
    from ..store.whole_run import write_whole_run

    return write_whole_run(store, cfg.run_name(), config, init, {r: (states[r], client_states[r]) for r in states},
                           normalize=cfg.normalize, data_root=data_root, source=source)
