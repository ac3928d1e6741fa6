"""``--set KEY=VALUE`` on ``figures`` and ``tables``: the option, its values kept in the
invocation's click context (``catalogue.overrides`` parses and describes them)."""
from __future__ import annotations

import click

from ..catalogue.overrides import parse

_META = "collapse_lab.overrides"


def _store(ctx, param, value):
    ctx.meta[_META] = parse(value) if value else {}
    return value


set_option = click.option(
    "--set", "settings", multiple=True, metavar="KEY=VALUE", expose_value=False, callback=_store,
    help="Override a train option in every run of the entries (repeatable): local_epochs=5, rounds=30, model=resnet20, "
         "lr=0.05, beta=0.1, dataset_options.per_class=300, ... Part of the runs' identity (other runs, other "
         "folders), stated under the figure, in a table's header and in the claims record.")


def given_overrides() -> dict:
    """The running command's ``--set`` overrides (empty: none)."""
    ctx = click.get_current_context(silent=True)
    return {} if ctx is None else ctx.meta.get(_META, {})
