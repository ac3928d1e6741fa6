"""The analysis commands' warnings: one line on stderr, so that stdout stays for the JSON."""
from __future__ import annotations

import click


def warn(msg: str) -> None:
    click.echo(f"warning: {msg}", err=True)
