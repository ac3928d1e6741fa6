"""The ``collapse-lab`` command line: the group and its command table. Each command lives in
``commands/`` and is imported when called (``cli.lazy``); how every command parses
(``cli.strict``) and ends when it cannot finish (``cli.failure``) is here, beside the table."""
from __future__ import annotations

import click

from .failure import Group
from .strict import strict


@click.group(cls=Group)
@click.version_option(package_name="collapse-lab")
def cli():
    """Dimensional collapse of representations in heterogeneous federated learning."""
    from ..faults import startup

    startup("command")


# The commands, each imported when called (``cli.lazy``): name, where it lives, and its
# line in the command table (its one home).
for _name, _target, _help in (
        ("train", "train:train", "Train federated runs into the run store."),
        ("spectrum", "spectrum:spectrum_cmd", "Covariance spectra of global and local models."),
        ("compare", "spectrum:compare_cmd", "Local vs global spectrum of each run, with the gap R."),
        ("layers", "layers:layers_cmd", "Per-layer covariance spectra over rounds: where collapse starts."),
        ("cka", "representations:cka_cmd", "CKA between the global model and each client, and between clients."),
        ("nc", "representations:nc_cmd", "Neural-collapse metrics NC1-NC4 of global and local models."),
        ("report", "report:report_cmd", "One self-contained HTML page per run store."),
        ("theory", "theory:theory", "Numerical checks of Proposition 1 and Theorem 1."),
        ("bench", "bench:bench_cmd", "Time the fast path against the reference loop."),
        ("sweep", "sweep:sweep_cmd", "Train a grid of runs on a local pool, a Ray cluster or SLURM."),
        ("runs", "runs_table:runs_cmd", "List the runs in a store, with status and accuracy."),
        ("figures", "figures:figures_cmd", "Render the papers' figures (training missing runs) and check their claims."),
        ("tables", "tables:tables_cmd", "Reproduce the papers' tables beside the printed numbers (training missing runs)."),
        ("ladder", "ladder:ladder_cmd", "The papers' claims on a ladder of scales: regime and verdict per rung."),
        ("units", "units:units_cmd", "Why representation units die: a client's local training replayed."),
        ("export", "export:export_cmd", "Write a store's metrics as TensorBoard event files."),
        ("import", "import_cmd:import_cmd", "Turn per-round checkpoints of other code into a run of the store.")):
    cli.add_lazy(_name, f"collapse_lab.commands.{_target}", _help)

strict(cli)


def main():
    cli(prog_name="collapse-lab")

