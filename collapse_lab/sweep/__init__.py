"""Sweeps: grids of runs from a spec, on a local process pool or Ray."""
