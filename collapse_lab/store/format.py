"""The store's format version (docs/store-format.md) and the versions a run records."""
from __future__ import annotations

import platform

from ..errors import CollapseLabError


class NewerFormatError(CollapseLabError):
    """A run written by a newer collapse-lab: never to be deleted or overwritten, only read
    after an upgrade."""


# The store format (docs/store-format.md): a reader reads its own major version and older;
# a minor version adds fields a reader may ignore. run.json without it is 1.0.
FORMAT_VERSION = "1.3"


def check_format(meta: dict, where) -> None:
    """Refuse, in one line, a run written in a newer major format than this reader knows."""
    v = str(meta.get("format_version", "1.0"))
    try:
        major = int(v.split(".")[0])
    except ValueError:
        raise CollapseLabError(f"{where}: format_version {v!r} is not MAJOR.MINOR; the file was edited or damaged") from None
    if major > int(FORMAT_VERSION.split(".")[0]):
        raise NewerFormatError(f"{where}: store format {v} is newer than this collapse-lab reads ({FORMAT_VERSION}); "
                               "upgrade collapse-lab (pip install -U collapse-lab)")


def package_versions() -> dict[str, str]:
    import numpy
    import torch

    from .. import __version__

    return {"collapse_lab": __version__, "torch": torch.__version__, "numpy": numpy.__version__,
            "python": platform.python_version()}
