"""The checkpoint store: one folder per run, one sub-folder per round (``docs/store-format.md``).

Between the two subsystems: training writes it, the analysis reads it."""
from .naming import run_path
from . import lock
from .run_dir import RunDir, find_runs, keeps_global, package_versions, parse_keep_global, parse_keep_local

from . import retention  # noqa: E402

__all__ = ["RunDir", "find_runs", "keeps_global", "lock", "parse_keep_global", "parse_keep_local", "package_versions", "retention", "run_path"]
