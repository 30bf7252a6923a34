"""Back and forward through the nodes a person visited, like a web browser."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class History:
    """Visited node ids with a cursor; visiting after going back drops the forward part."""

    items: list[str] = field(default_factory=list)
    index: int = -1
    glancing: bool = False  # the current entry is a glance (the tree's cursor)

    @property
    def current(self) -> str | None:
        """The node shown now."""
        return self.items[self.index] if self.items else None

    def visit(self, node_id: str, glance: bool = False) -> None:
        """Record a visit (a repeat of the current node is not a new step). A glance (the
        cursor resting on a node) after a glance replaces it, so arrowing through a
        branch is one step back, not one per line."""
        if self.current == node_id:
            self.glancing = self.glancing and glance
            return
        del self.items[self.index + 1 :]
        if glance and self.glancing and self.items:
            self.items[-1] = node_id
        else:
            self.items.append(node_id)
        self.index = len(self.items) - 1
        self.glancing = glance

    def back(self) -> str | None:
        """Step back; the node to show, or None at the start."""
        if self.index <= 0:
            return None
        self.index -= 1
        self.glancing = False
        return self.items[self.index]

    def forward(self) -> str | None:
        """Step forward; the node to show, or None at the end."""
        if self.index >= len(self.items) - 1:
            return None
        self.index += 1
        self.glancing = False
        return self.items[self.index]

    def replace(self, old: str, new: str | None) -> None:
        """A node moved (to ``new``) or went (``None``): its visits follow it or go."""
        if new is not None:
            self.items = [new if i == old else i for i in self.items]
            return
        current = self.current
        kept = [i for i in self.items if i != old]
        self.index = kept.index(current) if current in kept else len(kept) - 1
        self.items = kept
