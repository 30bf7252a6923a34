"""Work on a writable copy of a forest that cannot be written (one ``Vine.copy``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.widgets import Input, Label, Static

from ..heat import escape
from .form import FormDialog, field

# Where copies go by default: outside any repository a forest might sit in.
COPIES = Path("~/vine-forests")


def default_copy(root: Path) -> Path:
    """A free folder for a copy of the forest at ``root``: ``~/vine-forests/<name>``."""
    base = COPIES.expanduser() / root.name
    candidate, n = base, 2
    while candidate.exists():
        candidate, n = base.with_name(f"{base.name}-{n}"), n + 1
    return candidate


class CopyForestDialog(FormDialog):
    """Says why the forest is read-only; dismisses with ``{"dest": folder}`` to copy it."""

    TITLE_TEXT = "This forest is read-only"
    AUTO_FOCUS = "#copy-dest"

    def __init__(self, root: Path, reason: str) -> None:
        super().__init__()
        self.root = root
        self.reason = reason

    def fields(self) -> ComposeResult:
        yield Static(
            f"[b]{escape(str(self.root))}[/b] can be browsed but not edited: "
            f"{escape(self.reason)}.\n\nTo try edits, work on a copy of it with a "
            "git repository of its own (its notes, datasets and assets; the "
            "original is never touched). Every save there is a commit.",
            id="copy-why",
        )
        yield Label("Copy it to")
        yield field(str(default_copy(self.root)), id="copy-dest")

    def collect(self) -> dict[str, Any] | None:
        dest = self.query_one("#copy-dest", Input).value.strip()
        if not dest:
            self.complain("Name a folder for the copy.")
            return None
        return {"dest": dest}
