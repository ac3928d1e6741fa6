"""Representations z of stored checkpoints, cached on disk by checkpoint content and data set."""
from .extract import FeatureSource, extract_features

__all__ = ["FeatureSource", "extract_features"]
