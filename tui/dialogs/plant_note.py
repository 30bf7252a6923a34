"""Plant a new note under a branch (one ``plant``)."""

from __future__ import annotations

import re
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.widgets import Input, Label, TextArea

from monkeyllm.ids import folder_prefix

from .form import NodeForm, field


def slugify(text: str) -> str:
    """A lowercase id segment from a title."""
    return re.sub(r"[^a-z0-9]+", "-", text.casefold()).strip("-")


class PlantNoteDialog(NodeForm):
    """Dismisses with the node to plant (type note, parent the branch ``node_id``)."""

    TITLE_TEXT = "Plant a note"
    AUTO_FOCUS = "#plant-title"
    ENTER_SAVES = False
    KEYS_TEXT = "Ctrl+S saves · Enter or Tab moves to the next field · Esc cancels"

    def fields(self) -> ComposeResult:
        yield Label(f"Title (planted under {self.node_id})")
        yield field(id="plant-title")
        yield Label("Id segment (default: from the title)")
        yield field(placeholder="my-note", id="plant-slug")
        yield Label("Summary")
        yield field(id="plant-summary")
        yield Label("Body (markdown, optional)")
        yield TextArea(id="plant-body", soft_wrap=True)

    @on(Input.Changed, "#plant-title")
    def _title_typed(self, event: Input.Changed) -> None:
        """The id segment left empty is made from the title: show which, as it is typed."""
        self.query_one("#plant-slug", Input).placeholder = slugify(event.value) or "my-note"

    def collect(self) -> dict[str, Any] | None:
        title = self.query_one("#plant-title", Input).value.strip()
        summary = self.query_one("#plant-summary", Input).value.strip()
        slug = slugify(self.query_one("#plant-slug", Input).value or title)
        body = self.query_one("#plant-body", TextArea).text.strip()
        if not title or not summary or not slug:
            self.complain("A note needs a title and a summary.")
            return None
        node: dict[str, Any] = {
            "id": folder_prefix(self.node_id) + slug,
            "type": "note",
            "parent": self.node_id,
            "title": title,
            "summary": summary,
        }
        if body:
            node["body"] = body
        return node
