"""The checkpoint store: one folder per run, one sub-folder per round."""
from .run_dir import RunDir, find_runs, parse_keep_local, package_versions

__all__ = ["RunDir", "find_runs", "parse_keep_local", "package_versions"]
