"""Federated learning: local training, aggregation, methods and the round loop."""
