"""collapse-lab: dimensional collapse of representations in heterogeneous federated learning."""

__version__ = "0.1.0"
