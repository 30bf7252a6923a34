"""Breadcrumbs of the current node's trail: click an ancestor to jump to it."""

from __future__ import annotations

from textual.widgets import Static

from ..heat import escape


def crumb(node_id: str) -> str:
    """A short label for an index id: its folder name (the root is "forest")."""
    if node_id == "_index":
        return "forest"
    folder = node_id.removesuffix("/_index")
    return folder.rsplit("/", 1)[-1]


class TrailBar(Static):
    """``forest › sales › exchange-policy`` with each ancestor clickable."""

    def show(self, node_id: str, trail: list[str]) -> None:
        """Draw the trail of ``node_id``."""
        parts = [f"[@click=screen.jump({a!r})]{escape(crumb(a))}[/]" for a in trail]
        here = "forest" if node_id == "_index" else node_id.rsplit("/", 1)[-1]
        if node_id.endswith("/_index"):
            here = crumb(node_id)
        parts.append(f"[b]{escape(here)}[/b]")
        self.update(" › ".join(parts))
