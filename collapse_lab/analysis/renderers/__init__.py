"""Renderers of the catalogue: one file each, registered in ``analyses.RENDERERS``."""
