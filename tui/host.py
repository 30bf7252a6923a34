"""The browser app as its screens, dialogs and widgets reach it, typed: Textual types
``node.app`` as any ``App``, which knows nothing of the forest session."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from textual.dom import DOMNode

    from .app import BrowseApp
    from .session import Session


def browser(node: DOMNode) -> BrowseApp:
    """The ``BrowseApp`` that ``node`` runs in (every screen of ``vine browse`` does)."""
    return cast("BrowseApp", node.app)


def session_of(node: DOMNode) -> Session:
    """The open forest of the app that ``node`` runs in."""
    return browser(node).session
