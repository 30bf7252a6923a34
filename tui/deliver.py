"""Handing a thread worker's result back to the interface."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.dom import DOMNode
from textual.worker import get_current_worker


def deliver(node: DOMNode, callback: Callable[..., Any], *args: Any) -> None:
    """Run ``callback(*args)`` on the UI thread, unless a newer worker of the same
    exclusive group replaced this one (its answer would be stale)."""
    if get_current_worker().is_cancelled:
        return
    try:
        node.app.call_from_thread(callback, *args)
    except RuntimeError:  # the app closed while the engine was answering
        pass
