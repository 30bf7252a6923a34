"""The heat scale, drawn once so the colours of the tree and the digest can be read."""

from __future__ import annotations

from textual.widgets import Static

from ..heat import legend


class HeatLegend(Static):
    """A one-line legend: cold to hot."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(legend(), **kwargs)  # type: ignore[arg-type]
