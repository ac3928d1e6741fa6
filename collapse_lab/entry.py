"""The ``collapse-lab`` program: loads the command line without a traceback at any moment.

Loading takes a second or two (torch). A KeyboardInterrupt raised inside an import is not
only a traceback: numpy's and torch's import machinery can swallow it half-way and leave a
broken module, which then fails as AttributeError or RecursionError. So while the modules
load, SIGINT and SIGTERM are only noted; once loading is done, a noted stop ends the
program with one line (130 or 143), and the command's own handlers take over.
"""
from __future__ import annotations

import signal
import sys


def main() -> None:
    noted: list[int] = []

    def note(signum, frame):
        noted.append(signum)

    old = {s: signal.signal(s, note) for s in (signal.SIGINT, signal.SIGTERM)}
    from .faults import startup

    try:
        startup("import")
        from .cli import cli
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    if noted:
        sys.stderr.write("interrupted\n")
        sys.exit(143 if noted[0] == signal.SIGTERM else 130)
    try:
        startup("loaded")
        cli.main(prog_name="collapse-lab")
    except KeyboardInterrupt:  # between click's handlers, at the very end
        sys.stderr.write("interrupted\n")
        sys.exit(130)


if __name__ == "__main__":
    main()
