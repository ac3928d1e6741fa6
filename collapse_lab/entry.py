"""The ``collapse-lab`` program: loads the command line without a traceback at any moment.

Ctrl-C while the modules load (torch takes a second or two) would otherwise print a
KeyboardInterrupt traceback from deep inside an import.
"""
from __future__ import annotations

import sys


def main() -> None:
    try:
        from .cli import cli
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    try:
        cli.main(prog_name="collapse-lab")
    except KeyboardInterrupt:  # between click's handlers, at the very end
        sys.stderr.write("interrupted\n")
        sys.exit(130)


if __name__ == "__main__":
    main()
