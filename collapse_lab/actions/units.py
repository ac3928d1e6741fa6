"""Why representation units die (``collapse-lab units``): one client's local training of a
stored run replayed from the global model of the round before, with and without the run's
regularizer, per epoch (``catalogue.unit_replay``)."""
from __future__ import annotations

from ..errors import CollapseLabError


def units(run, *, round: int = 1, client: int = 0, epochs: int | None = None, data_root: str | None = None) -> dict:
    """Client ``client``'s local training of round ``round`` replayed for ``epochs`` (default
    the run's) with and without the regularizer: per epoch the loss terms, dead units, units
    that died, and the gradient norms on z and on each layer."""
    from ..analysis.select import load_run
    from ..catalogue.unit_replay import trace
    from ..data_root import check_data_root

    if epochs is not None and not 1 <= epochs <= 1000:
        raise CollapseLabError(f"--epochs {epochs}: give 1 to 1000 local epochs")
    return trace(load_run(run), round, client, epochs, None if data_root is None else check_data_root(data_root))
