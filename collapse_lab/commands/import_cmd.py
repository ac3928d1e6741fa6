"""``collapse-lab import``: turn per-round PyTorch checkpoints written by other code into a
run of a store (``store.writer``), so that every analysis reads them.

Files are read with ``torch.load(weights_only=True)``: tensors and plain containers only;
a checkpoint that needs arbitrary code to unpickle is refused, never run."""
from __future__ import annotations

import json
import re
from pathlib import Path

import click

from ..errors import CollapseLabError
from .common import data_root_option

PLACE = {"round": r"(?P<round>\d+)", "client": r"(?P<client>\d+)"}


def state_of(path: Path, key: str | None) -> dict:
    """The state dict in a checkpoint file: the file itself when it is one (name -> tensor),
    else the entry ``key`` of it (``a.b`` for a nested one), else its ``state_dict``/``model`` entry."""
    import pickle

    import torch

    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CollapseLabError(f"{path}: not a checkpoint of tensors that loads without running code "
                               f"({first.split('. ')[0][:120]}); "
                               "save model.state_dict() with torch.save") from None
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
    if not isinstance(obj, dict) or not obj or not all(isinstance(v, torch.Tensor) for v in obj.values()):
        raise CollapseLabError(f"{path}: holds no state dict (name -> tensor); name the entry that does with --key")
    return obj


def find(src: Path, pattern: str) -> list[tuple[dict, Path]]:
    """Files under ``src`` matching ``pattern`` (``{round}``, ``{client}`` placeholders; ``*``
    as in a shell), with the numbers the placeholders took."""
    rx = re.escape(pattern).replace(r"\*", "[^/]*")
    for k, v in PLACE.items():
        rx = rx.replace(re.escape("{" + k + "}"), v)
    out = []
    for p in sorted(src.rglob("*")):
        m = re.fullmatch(rx, p.relative_to(src).as_posix()) if p.is_file() else None
        if m:
            out.append(({k: int(v) for k, v in m.groupdict().items()}, p))
    return out


@click.command("import", short_help="Turn per-round checkpoints of other code into a run of the store.")
@click.argument("src", type=click.Path(file_okay=False, exists=True))
@click.option("--store", default="checkpoints", show_default=True, type=click.Path(file_okay=False), help="Run store.")
@click.option("--global", "global_pattern", required=True, metavar="PATTERN",
              help="The global models' files under SRC, e.g. 'round_{round}/global.pt' or 'globalmodel_*.pth' "
                   "(no {round}: one checkpoint, numbered --round).")
@click.option("--client", "client_pattern", metavar="PATTERN",
              help="The clients' files, e.g. 'round_{round}/client_{client}.pt' or 'localmodel{client}_*.pth'.")
@click.option("--key", default=None, help="Entry of each file that holds the state dict (a.b for nested).")
@click.option("--round", "round_", type=int, default=1, show_default=True,
              help="The round of checkpoints whose pattern has no {round}.")
@click.option("--dataset", required=True, help="The data set the run trained on (a registry name).")
@click.option("--model", default="external", show_default=True,
              help="Registry name of the model, or a name of your own with --model-factory at analysis time.")
@click.option("--clients", type=int, default=None, help="Clients of the run (default: the clients found).")
@click.option("--alpha", default=None, help="Dirichlet alpha of the run's split, where known.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--tag", default="", help="Suffix for the run folder name.")
@click.option("--json", "as_json", is_flag=True, help="Print the imported run as JSON on stdout.")
@data_root_option
def import_cmd(src, store, global_pattern, client_pattern, key, round_, dataset, model, clients, alpha, seed, tag,
               as_json):
    """Read SRC's checkpoints (torch.load with weights_only=True: tensors only) and record
    them as one run of --store: the global model of each round and, with --client, the
    clients' models."""
    from ..config import parse_alpha
    from ..data import DATASETS
    from ..store.writer import RunWriter

    src = Path(src)
    DATASETS.get(dataset)  # an unknown data set is one line listing the known
    if round_ < 1:
        raise CollapseLabError(f"--round must be >= 1 (got {round_})")
    globals_ = {(m.get("round", round_)): p for m, p in find(src, global_pattern)}
    if not globals_:
        raise CollapseLabError(f"--global {global_pattern}: no file under {src} matches it")
    if "{round}" not in global_pattern and len(globals_) > 1:
        raise CollapseLabError(f"--global {global_pattern} matches {len(globals_)} files; put {{round}} where the "
                               "round number is, or name one file")
    per_round: dict[int, dict[int, Path]] = {}
    for m, p in find(src, client_pattern) if client_pattern else []:
        if "client" not in m:
            raise CollapseLabError(f"--client {client_pattern}: put {{client}} where the client number is")
        per_round.setdefault(m.get("round", round_), {})[m["client"]] = p
    rounds = sorted(globals_)
    found = sorted({k for c in per_round.values() for k in c})
    config = {"dataset": dataset, "model": model, "clients": clients or (max(found) + 1 if found else 1),
              "rounds": rounds[-1], "seed": seed, "tag": tag, "partition": "natural" if alpha is None else "dirichlet"}
    if alpha is not None:
        config["alpha"] = parse_alpha(alpha)
    states = {r: state_of(globals_[r], key) for r in rounds}  # every file read before anything is written
    client_states = {r: {k: state_of(p, key) for k, p in per_round.get(r, {}).items()} for r in rounds}
    w = RunWriter(store, config, gaps=True, source={"imported_from": str(src.resolve()), "global": global_pattern,
                                                    "client": client_pattern})
    if w.next_round != 1:
        w.close(complete=False)
        raise CollapseLabError(f"{w.run.path} exists already; choose another --store or --tag")
    for r in rounds:  # the rounds the other code saved keep their numbers; the others have no files
        w.write_round(r, states[r], client_states[r], {"imported": True})
    path = w.close()
    out = {"run": str(path), "rounds": rounds, "clients": {r: sorted(c) for r, c in client_states.items() if c}}
    if as_json:
        click.echo(json.dumps(out, indent=1))
    else:
        click.echo(f"imported {len(rounds)} round(s) of {src} into {path}")
