"""Append a section to a node's body (one ``graft``)."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.widgets import Input, Label, TextArea

from .form import NodeForm, field


class AppendSectionDialog(NodeForm):
    """Dismisses with ``{"append_section": {header, body}}``."""

    TITLE_TEXT = "Append a section"
    AUTO_FOCUS = "#section-header"
    ENTER_SAVES = False
    KEYS_TEXT = "Ctrl+S saves · Enter or Tab moves to the next field · Esc cancels"

    def fields(self) -> ComposeResult:
        yield Label(f"Header (appended to {self.node_id})")
        yield field(placeholder="Notes", id="section-header")
        yield Label("Body (markdown)")
        yield TextArea(id="section-body", soft_wrap=True)

    def collect(self) -> dict[str, Any] | None:
        header = self.query_one("#section-header", Input).value.strip()
        body = self.query_one("#section-body", TextArea).text.strip()
        if not header or not body:
            self.complain("A section needs a header and a body.")
            return None
        return {"append_section": {"header": header, "body": body}}
