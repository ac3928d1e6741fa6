"""Schematic figures (FedETF Figs. 1, 2, 4): drawings of an idea, with no data behind
them, so nothing to compute; ``figures --list`` names them and says why they are not
rendered (``not_rendered`` in their spec)."""
from __future__ import annotations

from ...errors import CollapseLabError
from .. import RENDERERS


class Schematic:
    metrics = ()  # what each series' ``metrics`` holds (the claims' names)
    @staticmethod
    def compute(entry, ctx) -> dict:
        raise CollapseLabError(f"{entry.name} is a schematic: {entry.not_rendered or 'no data behind it'}")

    @staticmethod
    def draw(values: dict, entry):
        raise CollapseLabError(f"{entry.name} is a schematic")


RENDERERS.register("schematic", kind="figure")(Schematic)
