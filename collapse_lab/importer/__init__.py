"""Runs trained by other code, recorded into a store (``collapse-lab import``)."""
from .run import import_run

__all__ = ["import_run"]
