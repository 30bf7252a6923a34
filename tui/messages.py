"""Messages the widgets post to the browse screen: small dataclasses."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class Navigate(Message):
    """Show this node (a hop: it enters the history)."""

    node_id: str


@dataclass
class Glance(Message):
    """The tree's cursor rests on this node: show its digest (a glance: a run of them
    is one step in the history)."""

    node_id: str


@dataclass
class ReadSection(Message):
    """Open the reader on this node, at ``section`` (None: the whole body)."""

    node_id: str
    section: str | None = None
