"""Which layout renders which call, and the layouts of errors and of anything else."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from monkeyllm.errors import is_error

from .harvest import harvest
from .lifecycle import calendar, coverage, history
from .pieces import Response, count, footer, pairs_grid, plain
from .reads import locate, look, move, pick, query, scan, sniff
from .writes import WRITE_VERBS, init, write


def reindexed(console: Console, response: Response) -> set[str]:
    """One line: how many nodes the rebuilt catalog holds, and what was skipped."""
    skipped = response.get("skipped") or 0
    text = Text.assemble(
        ("Rebuilt the catalog: ", "bold"),
        f"{count(response.get('nodes'), 'node')} in {response.get('elapsed_ms')} ms; heat kept.",
    )
    if skipped:
        text.append(f" {count(skipped, 'file')} skipped: vine validate says why.", style="yellow")
    console.print(text)
    return {"nodes", "skipped", "elapsed_ms"}


Renderer = Callable[[Console, Response], set[str]]
RENDERERS: dict[str, Renderer] = {
    "locate": locate,
    "look": look,
    "move": move,
    "pick": pick,
    "scan": scan,
    "sniff": sniff,
    "query": query,
    "harvest": harvest,
    "init": init,
    "history": history,
    "calendar": calendar,
    "coverage": coverage,
    "reindex": reindexed,
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
    if is_error(response):
        shown = _error(console, response)
    elif call in WRITE_VERBS:
        shown = write(console, call, response)
    elif call in RENDERERS:
        shown = RENDERERS[call](console, response)
    else:
        shown = _generic(console, call, response)
    footer(console, response, shown, call)


def _error(console: Console, response: Response) -> set[str]:
    error = response.get("error") or {}
    if not isinstance(error, dict):
        error = {"message": error}
    body = pairs_grid((k, v) for k, v in error.items() if k != "hint")
    console.print(
        Panel(
            body,
            title=Text(str(error.get("code", "error")), style="bold red"),
            title_align="left",
            border_style="red",
            expand=False,
        )
    )
    if error.get("hint"):
        console.print(Text.assemble(("hint: ", "bold cyan"), plain(error["hint"])))
    return {"error"}


def _generic(console: Console, call: str, response: Response) -> set[str]:
    from rich.json import JSON

    console.print(Text(call, style="bold"))
    console.print(JSON.from_data(response, ensure_ascii=False, default=str))
    return set(response)
