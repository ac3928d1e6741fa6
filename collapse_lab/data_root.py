"""Where the data sets live when a command is not told per run: one folder holding the
standard layouts of every data set (``cifar-10-batches-py/``, ``cifar-100-python/``,
``tiny-imagenet-200/``, ...).

Precedence: the command's ``--data-root`` first, then
the environment variable ``COLLAPSE_LAB_DATA``, then ``data_root`` in the user config file
(``$XDG_CONFIG_HOME/collapse-lab/config.toml``, else ``~/.config/collapse-lab/config.toml``).
The data root is never part of a run's identity (``config.SPEED_ONLY``): the same run reads
its files wherever they are.
"""
from __future__ import annotations

import os
import tomllib
from pathlib import Path

from .errors import CollapseLabError

ENV = "COLLAPSE_LAB_DATA"


def user_config_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "collapse-lab" / "config.toml"


def check_data_root(path: str) -> str:
    """A command's ``--data-root``, refused in one line unless it is a folder."""
    if not Path(path).is_dir():
        raise CollapseLabError(f"--data-root {path} is not a folder; give the folder that holds the data sets' "
                               "standard layouts (cifar-10-batches-py/, cifar-100-python/, ...)")
    return str(path)


def default_data_root(given: str | None = None) -> tuple[str | None, str]:
    """The data root a run gets when it names none, and where it came from: ``given`` (the
    command's ``--data-root``, passed down by the command), else the environment, else the
    user config file. Nothing is remembered between calls."""
    if given is not None:
        return str(given), "--data-root"
    if os.environ.get(ENV):
        return os.environ[ENV], f"${ENV}"
    f = user_config_file()
    if f.is_file():
        try:
            v = tomllib.loads(f.read_text()).get("data_root")
        except (OSError, ValueError) as e:
            raise CollapseLabError(f"{f} does not parse ({e}); fix or remove it") from None
        if v is not None:
            if not isinstance(v, str):
                raise CollapseLabError(f"{f}: data_root must be a folder name (text)")
            return os.path.expanduser(v), str(f)
    return None, "nowhere (no --data-root, no $COLLAPSE_LAB_DATA, no data_root in " + str(f) + ")"


def source_of(path) -> str:
    """Where a data root a loader was given came from, for its error messages: ``$COLLAPSE_LAB_DATA``
    or the user config file when the path is theirs (and no --data-root named it), else
    ``--data-root`` (the command's, or a run's recorded one)."""
    p = str(path)
    if os.environ.get(ENV) and os.path.abspath(os.environ[ENV]) == os.path.abspath(p):
        return f"${ENV}"
    f = user_config_file()
    try:
        v = tomllib.loads(f.read_text()).get("data_root") if f.is_file() else None
    except (OSError, ValueError):
        v = None
    if isinstance(v, str) and os.path.abspath(os.path.expanduser(v)) == os.path.abspath(p):
        return f"data_root in {f}"
    return "--data-root"
