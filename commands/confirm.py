"""Asking before a destructive call: what its dry run says will go, then yes or no."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from monkeyllm.text import counted


def _lines(call: str, preview: dict[str, Any]) -> Text:
    node = preview.get("id", "?")
    text = Text()
    text.append(f"{node}", style="bold")
    if preview.get("title"):
        text.append(f"  ({preview.get('type', 'node')}: {preview['title']})")
    text.append("\n")
    text.append(
        f"  the file {node}.md leaves the tree (git keeps it: `git revert` brings it back)\n"
    )
    indexes = preview.get("indexes") or []
    if indexes:
        text.append("  its entry leaves: " + ", ".join(indexes) + "\n")
    payload = preview.get("payload_moved")
    if payload:
        text.append(f"  its payload moves to {payload} (kept, not deleted)\n")
    anchors = preview.get("anchors") or []
    removed = preview.get("backlinks_removed") or 0
    if removed:
        verb = "is" if removed == 1 else "are"
        text.append(
            f"  {counted(removed, 'link')} pointing at it {verb} dropped, from:\n", style="yellow"
        )
        for anchor in anchors:
            text.append(f"    {anchor.get('source')} ({anchor.get('rel')})\n")
        more = (preview.get("anchor_count") or 0) - len(anchors)
        if more > 0:
            text.append(f"    ... and {more} more\n")
    text.rstrip()
    return text


def confirm(console: Console, call: str, preview: dict[str, Any]) -> bool:
    """Show what ``call`` would do (its dry-run answer) and ask; True to go ahead.

    The answer is read from standard input; an empty answer or end of input is no.
    """
    console.print(
        Panel(
            _lines(call, preview),
            title=Text(f"{call}: this will remove", style="bold red"),
            title_align="left",
            border_style="red",
            expand=False,
        )
    )
    try:
        answer = console.input(
            Text(f"{call.capitalize()} {preview.get('id', 'it')}? [y/N] ", style="bold")
        )
    except (EOFError, KeyboardInterrupt):
        console.print()
        return False
    return answer.strip().lower() in ("y", "yes")
