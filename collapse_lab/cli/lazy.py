"""A command group whose sub-commands are imported when called, so ``collapse-lab --help``
loads neither torch nor numpy (well under a second).

Each lazy command is declared once, in ``cli/__init__.py``, with its module and its one-line help;
the help text lives there alone and is given to the command when it is loaded.
"""
from __future__ import annotations

import importlib
from typing import Callable

import click


class LazyGroup(click.Group):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy: dict[str, tuple[str, str]] = {}  # name -> ("module:attribute", short help)
        self.on_load: Callable[[click.Command], click.Command] = lambda c: c

    def add_lazy(self, name: str, target: str, short_help: str) -> None:
        self.lazy[name] = (target, short_help)

    def list_commands(self, ctx):
        return sorted(set(self.commands) | set(self.lazy))

    def get_command(self, ctx, name):
        if name not in self.commands and name in self.lazy:
            target, short = self.lazy[name]
            module, attr = target.split(":")
            cmd = getattr(importlib.import_module(module), attr)
            cmd.short_help = short
            self.add_command(self.on_load(cmd), name)
        return self.commands.get(name)

    def all_commands(self) -> dict[str, click.Command]:
        """Every command, loading the lazy ones (the docs' tests read all their options)."""
        return {name: self.get_command(None, name) for name in self.list_commands(None)}

    def format_commands(self, ctx, formatter):
        """The command table from the declared help, loading nothing."""
        rows = []
        for name in self.list_commands(ctx):
            if name in self.commands:
                cmd = self.commands[name]
                if cmd.hidden:
                    continue
                rows.append((name, cmd.get_short_help_str(formatter.width - 6 - len(name))))
            else:
                rows.append((name, self.lazy[name][1]))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
