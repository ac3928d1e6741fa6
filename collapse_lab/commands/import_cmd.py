"""``collapse-lab import``: turn per-round PyTorch checkpoints written by other code into a
run of a store (``importer``), so that every analysis reads them."""
from __future__ import annotations

import json

import click

from .options import json_option, store_option
from .common import checked_data_root, data_root_option


@click.command("import")
@click.argument("src", type=click.Path(file_okay=False, exists=True))
@store_option()
@click.option("--global-files", "global_pattern", required=True, metavar="PATTERN",
              help="The global models' files under SRC, e.g. 'round_{round}/global.pt' (round 0: the initial model) "
                   "or 'globalmodel_*.pth' (no {round}: one checkpoint, numbered --round).")
@click.option("--client-files", "client_pattern", metavar="PATTERN",
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
@json_option
@data_root_option
def import_cmd(src, store, global_pattern, client_pattern, key, round_, dataset, model, normalize, method, reg, beta,
               clients, alpha, seed, settings, tag, as_json, data_root):
    """Read SRC's checkpoints (torch.load with weights_only=True: tensors only) and record
    them as one run of --store: the global model of each round (round 0: the initial model)
    and, with --client-files, the clients' models. Nothing is written unless every file reads and
    loads into --model."""
    from ..importer import import_run

    out = import_run(src, store, global_pattern, client_pattern, key, round_, dataset, model, normalize, method, reg,
                     beta, clients, alpha, seed, settings, tag, data_root=checked_data_root(data_root))
    if as_json:
        click.echo(json.dumps(out, indent=1))
    else:
        rounds = [r for r in out["rounds"] if r > 0]
        click.echo(f"imported {len(rounds)} round(s) of {src} into {out['run']}"
                   + (" with the initial model (round 0)" if 0 in out["rounds"] else ""))
