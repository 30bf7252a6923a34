"""A node's history (``history``): its commits, newest first, with who and what."""

from __future__ import annotations

from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label, Static

from monkeyllm.errors import error_of
from monkeyllm.text import counted

from ..deliver import deliver
from ..heat import escape
from ..host import session_of


class HistoryScreen(ModalScreen[None]):
    """The commits that changed one node (across its moves)."""

    BINDINGS = [Binding("escape,h,q", "close", "Close")]

    def __init__(self, node_id: str) -> None:
        super().__init__()
        self.node_id = node_id

    def compose(self) -> ComposeResult:
        with Vertical(id="history-box"):
            yield Label(f"History of {self.node_id}", classes="dialog-title")
            yield DataTable(id="history-table", cursor_type="row", zebra_stripes=True)
            yield Static("Reading the commits ...", id="history-status")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("when", "action", "by", "message", "commit")
        table.focus()
        self._load()

    @work(thread=True, exclusive=True, group="history")
    def _load(self) -> None:
        out = session_of(self).read("history", id=self.node_id, limit=50)
        deliver(self, self._fill, out)

    def _fill(self, out: dict[str, Any]) -> None:
        status = self.query_one("#history-status", Static)
        err = error_of(out)
        if err:
            status.update(
                f"[$error]{escape(str(err.get('code')))}: {escape(str(err.get('message')))}[/]"
            )
            return
        table = self.query_one(DataTable)
        for entry in out.get("entries", []):
            at = str(entry.get("at") or "").replace("T", " ")[:19]
            table.add_row(
                at,
                entry.get("action", ""),
                entry.get("by") or "—",
                entry.get("message", ""),
                str(entry.get("commit", ""))[:12],
            )
        count = len(out.get("entries", []))
        text = counted(count, "commit") + (", older ones exist" if out.get("truncated") else "")
        status.update(f"[dim]{text} · Escape closes[/dim]")

    def action_close(self) -> None:
        self.dismiss(None)
