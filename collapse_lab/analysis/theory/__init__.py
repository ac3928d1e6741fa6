"""Numerical checks of FedDecorr's Proposition 1 and Theorem 1."""
