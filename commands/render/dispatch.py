"""Which layout renders which call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console

from .lifecycle import _calendar, _coverage, _history
from .pieces import Response, _footer
from .reads import _locate, _look, _move, _pick, _query, _scan, _sniff
from .writes import WRITE_VERBS, _error, _generic, _harvest, _init, _write

Renderer = Callable[[Console, Response], set[str]]
RENDERERS: dict[str, Renderer] = {
    "locate": _locate, "look": _look, "move": _move, "pick": _pick, "scan": _scan,
    "sniff": _sniff, "query": _query, "harvest": _harvest, "init": _init,
    "history": _history, "calendar": _calendar, "coverage": _coverage,
}


def show(console: Console, call: str, response: dict[str, Any]) -> None:
    """Render a successful response of ``call`` to ``console``.

    Reads get tables (locate, move, scan, sniff, query, history, coverage), a bar
    chart (calendar), digest panels (look) or markdown (pick); writes get a short
    success panel; anything else is shown as
    JSON. Keys a layout does not know are listed as ``key: value``, and a truncated
    response, its hints and its page cursor are always printed plainly.

    Args:
        console: Where to print.
        call: The call's name (locate, look, move, pick, scan, sniff, query, history,
            calendar, coverage, plant, graft, tend, prune, transplant, harvest, or any
            other).
        response: The engine's response object.
    """
    if not isinstance(response, dict):
        _generic(console, call, {"response": response})
        return
    if set(response) == {"error"}:
        shown = _error(console, response)
    elif call in WRITE_VERBS:
        shown = _write(console, call, response)
    elif call in RENDERERS:
        shown = RENDERERS[call](console, response)
    else:
        shown = _generic(console, call, response)
    _footer(console, response, shown, call)
