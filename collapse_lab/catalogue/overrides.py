"""``figures``/``tables ENTRY --set KEY=VALUE``: overrides of an entry's runs (issue 48).

A key is a ``train`` option (``local_epochs``, ``rounds``, ``model``, ``lr``, ``beta``, ...), or
one option of a mapping written with a dot (``dataset_options.per_class=300``,
``reg_options.normalization=paper``). The value is read as JSON where it parses (``5``,
``0.05``, ``inf`` as text), checked as ``train`` checks it, applied to every run of every
entry named (``analysis.catalogue.Entry.configs``) and so part of each run's identity; the
figure's note, a table's header and the claims record state it. An unknown key, a bad value,
a key given twice, an option that is not part of what a run computes (``device``,
``keep_local``, ...), a key an entry varies across its runs (its grid) and a setting that
changes none of an entry's runs are each one line, exit status 2.
"""
from __future__ import annotations

from ..errors import CollapseLabError

# the catalogue's own bookkeeping, set by the command, never by --set
NOT_SET = ("tag", "smoke", "precision", "model_revision", "preset", "normalize")


def parse(items) -> dict:
    """``KEY=VALUE`` items as ``{field: value}`` (dotted keys as ``{mapping: {key: value}}``),
    each value coerced as ``train`` coerces it."""
    import dataclasses

    from ..config import SPEED_ONLY, RunConfig
    from ..runspec.resolve import DICT_FIELDS, INT_FIELDS, coerce, parse_key_values

    fields = {f.name for f in dataclasses.fields(RunConfig)}
    out: dict = {}
    for key, value in parse_key_values(items, "--set", "local_epochs=5").items():
        head, dot, sub = key.partition(".")
        if head not in fields:
            raise CollapseLabError(f"--set {key}: no such train option; use a train option's name with _ (e.g. "
                                   "local_epochs=5, model=resnet20, dataset_options.per_class=300)")
        if head in SPEED_ONLY or head in NOT_SET:
            raise CollapseLabError(f"--set {key}: {head} is not part of what a run computes (it changes no figure or "
                                   "table); give it as the command's own option where it has one")
        if dot:
            if head not in DICT_FIELDS or not sub:
                raise CollapseLabError(f"--set {key}: only the mappings {', '.join(DICT_FIELDS)} take KEY.NAME")
            out.setdefault(head, {})[sub] = value
        else:
            if head in out:
                raise CollapseLabError(f"--set {head} is given twice; give it once")
            if head in INT_FIELDS and isinstance(value, float) and value.is_integer():  # as train --rounds 1e3 is
                raise CollapseLabError(f"--set {key}={items_value(items, key)}: {head} is a whole number; write it with "
                                       "digits only (e.g. rounds=1000)")
            out[head] = coerce(head, value, "--set: ") if head not in ("alpha",) else value
    return out


def items_value(items, key: str) -> str:
    """The text the user wrote for ``key`` in ``KEY=VALUE`` items."""
    return next((i.split("=", 1)[1] for i in items if i.split("=", 1)[0].strip() == key), "")


def describe(overrides: dict) -> str:
    """``dataset_options.per_class=300, local_epochs=5``: how a figure, a table and the claims say them."""
    from .claims_file import _overrides_text

    return _overrides_text(overrides)
