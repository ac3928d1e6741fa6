"""Per-layer covariance spectra of any network, from one forward pass (issue 50). Below both
subsystems: the trainer's ``--probe-layers`` and the analysis's ``collapse-lab layers`` read
layers with the same functions."""
from .modules import find_module, last_linear
from .spectra import Z, default_layers, layer_spectra, reduce_rows, sample_positions

__all__ = ["Z", "default_layers", "find_module", "last_linear", "layer_spectra", "reduce_rows", "sample_positions"]
