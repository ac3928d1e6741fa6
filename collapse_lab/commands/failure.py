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

import errno
import os
import sys

import click

from ..errors import CollapseLabError
from ..signals import exit_status, received, signame_of, sigterm_as_interrupt
from .lazy import LazyGroup


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def _quiet_pipe() -> int:
    """stdout's reader went away: nothing more to say to it (Python would complain at exit)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    return 141


TRAINS = ("train", "sweep")  # the commands continued with --resume
TRAINS_FIRST = ("figures", "tables", "ladder")  # commands that train what they lack, then write


def os_error_line(e: OSError, command: str | None = "train") -> tuple[str, int] | None:
    """A one-line message for an OSError the user can act on, or None (a bug). ``command``:
    the sub-command that met it (a full disk's advice depends on what it was writing)."""
    where = f" writing {e.filename}" if e.filename else ""
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        what = "the disk is full" if e.errno == errno.ENOSPC else "the disk quota is exceeded"
        free = _free_space(e.filename)
        if command in TRAINS:
            return (f"{what}{where}{free}; complete rounds are kept: free some space (or train with --keep-local "
                    "last/none) and continue with --resume", 1)
        if command in TRAINS_FIRST:
            return (f"{what}{where}{free}; every trained round is kept: free some space there and run the command "
                    "again", 1)
        return f"{what}{where}{free}; free some space there and run the command again", 1
    if e.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return f"{e.strerror}{where or (' on ' + str(e.filename) if e.filename else '')}; choose a folder you can write", 1
    if e.errno in (errno.ENOTDIR, errno.EEXIST):
        return f"{e.filename}: a file stands where a folder is needed; choose another --store (or --out)", 2
    if e.errno == errno.ELOOP:
        return f"{e.filename}: a symbolic link loop; remove the link", 2
    if e.errno == errno.ENAMETOOLONG:
        return f"{str(e.filename)[:120]}: file name too long; choose a shorter --store, --out or --tag", 2
    return None


def _free_space(path) -> str:
    """`` (12 kB free there)`` for the disk that holds ``path``, or "" if it cannot be read."""
    from pathlib import Path

    p = Path(str(path)) if path else None
    while p is not None and not p.exists() and p != p.parent:
        p = p.parent
    try:
        st = os.statvfs(p) if p is not None else None
    except OSError:
        return ""
    if st is None:
        return ""
    n = st.f_bavail * st.f_frsize
    size = next(f"{n / d:.0f} {u}" for d, u in ((1 << 30, "GB"), (1 << 20, "MB"), (1 << 10, "kB"), (1, "bytes"))
                if n >= d or u == "bytes")
    return f" ({size} free there)"


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
            ctx.exit(_quiet_pipe())
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
