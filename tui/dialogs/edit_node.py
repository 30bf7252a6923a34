"""Edit a node's title, summary and tags (one ``graft`` of its frontmatter), refused
when someone else changed the node since the dialog showed it."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.widgets import Input, Label

from .form import FormDialog, field


class EditNodeDialog(FormDialog):
    """Dismisses with a graft patch holding only what changed, and the revision the
    values shown came from (the save answers E_CONFLICT, writing nothing, when the
    node has changed since)."""

    TITLE_TEXT = "Edit title, summary and tags"
    AUTO_FOCUS = "#edit-summary"

    def __init__(self, digest: dict[str, Any]) -> None:
        super().__init__()
        self.digest = digest

    def fields(self) -> ComposeResult:
        yield Label("Title")
        yield field(str(self.digest.get("title") or ""), id="edit-title")
        yield Label("Summary")
        yield field(str(self.digest.get("summary") or ""), id="edit-summary")
        yield Label("Tags (comma-separated)")
        yield field(", ".join(map(str, self.digest.get("tags") or [])), id="edit-tags")

    def collect(self) -> dict[str, Any] | None:
        title = self.query_one("#edit-title", Input).value.strip()
        summary = self.query_one("#edit-summary", Input).value.strip()
        tags = [
            t.strip() for t in self.query_one("#edit-tags", Input).value.split(",") if t.strip()
        ]
        if not title or not summary:
            self.complain("A node needs a title and a summary.")
            return None
        changed: dict[str, Any] = {}
        if title != self.digest.get("title"):
            changed["title"] = title
        if summary != self.digest.get("summary"):
            changed["summary"] = summary
        if tags != list(self.digest.get("tags") or []):
            changed["tags"] = tags
        if not changed:
            self.complain("Nothing changed.")
            return None
        patch: dict[str, Any] = {"set_frontmatter": changed}
        if self.digest.get("revision"):
            patch["if_revision"] = self.digest["revision"]
        return patch
