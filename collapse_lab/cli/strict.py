"""Strict parsing for every command: a single-valued option given twice is refused (click
would keep the last), and an empty string where a file or folder is named is refused (it
would mean the current folder)."""
from __future__ import annotations

import click

from .lazy import LazyGroup


def refuse_repeats(command: click.Command, args: list[str]) -> None:
    """An option that takes one value, given twice, is an error (click keeps the last)."""
    single: dict[str, click.Option] = {}
    takes_value: set[str] = set()
    for p in command.params:
        if isinstance(p, click.Option) and not p.multiple and not p.count:
            for o in (*p.opts, *p.secondary_opts):
                single[o] = p
        if isinstance(p, click.Option) and not p.is_flag and not p.count:
            takes_value.update(p.opts)
    seen: dict[str, str] = {}
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "--":
            break
        name = a.split("=", 1)[0] if a.startswith("--") else a
        if name in takes_value and "=" not in a:
            skip = True  # its value may look like an option
        p = single.get(name)
        if p is None:
            continue
        if p.name in seen:
            raise click.UsageError(f"{name} given twice ({seen[p.name]} first); give it once", ctx=None)
        seen[p.name] = name


def strict(command: click.Command) -> click.Command:
    """Refuse repeated single-valued options in ``command`` and all its sub-commands (lazy ones
    as they load)."""
    if isinstance(command, LazyGroup):
        command.on_load = strict
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            strict(sub)
        return command
    parse = command.parse_args

    def parse_args(ctx, args):
        refuse_repeats(command, args)
        rest = parse(ctx, args)
        for p in command.params:  # '' as a folder would mean the current one: never what was meant
            v = ctx.params.get(p.name)
            if isinstance(p.type, click.Path) and isinstance(v, str) and not v.strip():
                name = p.opts[0] if isinstance(p, click.Option) else p.human_readable_name
                raise click.UsageError(f"{name} is empty; name a file or folder", ctx=ctx)
        return rest

    command.parse_args = parse_args
    return command
