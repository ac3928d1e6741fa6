"""``--set KEY=VALUE`` on ``figures`` and ``tables``: the option, whose parsed values reach the
command's function as ``settings`` (``catalogue.overrides`` parses and describes them)."""
from __future__ import annotations

import click

from ..catalogue.overrides import parse

def _parsed(ctx, param, value) -> dict:
    return parse(value) if value else {}


set_option = click.option(
    "--set", "settings", multiple=True, metavar="KEY=VALUE", callback=_parsed,
    help="Override a train option in every run of the entries (repeatable): local_epochs=5, rounds=30, model=resnet20, "
         "lr=0.05, beta=0.1, dataset_options.per_class=300, ... Part of the runs' identity (other runs, other "
         "folders), stated under the figure, in a table's header and in the claims record.")

