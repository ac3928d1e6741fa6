"""How every command ends when it cannot finish: one line, never a traceback.

- bad input (``CollapseLabError``, click's usage errors, an option given twice): one
  ``error:`` line naming the option, exit status 2;
- the disk full, or a folder that cannot be written: one ``error:`` line, exit status 1;
- Ctrl-C: ``interrupted``, 130; SIGTERM the same, 143 (``signals``);
- a closed pipe (``runs | head -1``): quiet, exit status 141, as a tool killed by SIGPIPE;
- anything else is a bug in collapse-lab: one ``internal error:`` line, exit status 1
  (``COLLAPSE_LAB_DEBUG=1`` shows the traceback).
"""
from __future__ import annotations

import os
import sys

import click

from ..errors import CollapseLabError
from ..signals import exit_status, received, signame_of, sigterm_as_interrupt
from .lazy import LazyGroup
from .os_errors import os_error_line, quiet_pipe


def one_line(text: str) -> str:
    return " ".join(str(text).split())


class Group(LazyGroup):
    """The top-level group: every failure ends as the module docstring says; its commands load when called."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            code = rv if isinstance(rv, int) and not isinstance(rv, bool) else 0
        except click.exceptions.NoArgsIsHelpError as e:  # a group called alone: its help, as --help prints it
            click.echo(e.ctx.get_help())
            code = 0
        except click.UsageError as e:
            where = f"{e.ctx.command_path}: " if e.ctx is not None else ""
            hint = f" (see {e.ctx.command_path} --help)" if e.ctx is not None else ""
            click.echo(f"error: {where}{one_line(e.format_message())}{hint}", err=True)
            code = 2
        except click.ClickException as e:
            click.echo(f"error: {one_line(e.format_message())}", err=True)
            code = e.exit_code
        except click.Abort as e:  # Ctrl-C while click parses or prompts
            signame = signame_of(e.__context__) if e.__context__ is not None else "SIGINT"
            click.echo("interrupted", err=True)
            code = exit_status(signame)
        if standalone_mode:
            sys.exit(code)
        return code

    def invoke(self, ctx):
        try:
            with sigterm_as_interrupt():
                return super().invoke(ctx)
        except CollapseLabError as e:
            click.echo(f"error: {one_line(e)}", err=True)
            ctx.exit(2)
        except KeyboardInterrupt as e:
            click.echo("interrupted" + (" (SIGTERM)" if signame_of(e) == "SIGTERM" else ""), err=True)
            ctx.exit(exit_status(signame_of(e)))
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except BrokenPipeError:
            ctx.exit(quiet_pipe())
        except OSError as e:
            line = os_error_line(e, ctx.invoked_subcommand)
            if line is None or os.environ.get("COLLAPSE_LAB_DEBUG"):
                _internal(e)
                ctx.exit(1)
            click.echo(f"error: {line[0]}", err=True)
            ctx.exit(line[1])
        except Exception as e:  # noqa: BLE001 -- the last line of defence (RecursionError included)
            if received() is not None and not os.environ.get("COLLAPSE_LAB_DEBUG"):
                # a stop that broke a module it interrupted mid-import (signals.sigterm_as_interrupt)
                click.echo("interrupted" + (" (SIGTERM)" if received() == "SIGTERM" else ""), err=True)
                ctx.exit(exit_status(received()))
            _internal(e)
            ctx.exit(1)


def _internal(e: BaseException) -> None:
    if os.environ.get("COLLAPSE_LAB_DEBUG"):
        raise e
    first = (str(e).splitlines() or [""])[0]
    click.echo(f"internal error: {type(e).__name__}: {first} (a bug in collapse-lab, not in your input; "
               "rerun with COLLAPSE_LAB_DEBUG=1 for the traceback and report it)", err=True)

