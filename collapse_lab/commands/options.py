"""Options several commands share, each declared once here; a command gives its own help
where the option means something particular to it (``--store`` on Ray: a folder every node
sees)."""
from __future__ import annotations

import click

from ..spectra.constants import DEFAULT_TAU

STORE = "checkpoints"  # the run store every command reads and writes by default
PRESETS = ("quick", "cpu", "paper")  # the catalogue's presets (analysis.catalogue.PRESETS)


def store_option(help: str = "Run store.", name: str = "store"):
    return click.option("--store", name, default=STORE, show_default=True, type=click.Path(file_okay=False), help=help)


def preset_option(default: str, help: str):
    return click.option("--preset", type=click.Choice(PRESETS), default=default, show_default=True, help=help)


def tau_option():
    return click.option("--tau", type=float, default=DEFAULT_TAU, show_default=True,
                        help="Significance threshold on sigma_k (the papers' log tau = -2).")


def top_option():
    return click.option("--top", type=int, default=None,
                        help="Indices used for R (default: all above the numerical floor).")
