"""User-facing errors: one line that says what to do; the CLI turns them into exit status 2."""


class CollapseLabError(Exception):
    """Bad input or an impossible request. The message is shown as one line, exit status 2."""


class RunMissing(CollapseLabError):
    """A run an analysis reads is not (wholly) in the store. The command that met it adds the
    line that trains it (it alone knows its own options: --set, --store, --data-root)."""
