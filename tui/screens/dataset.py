"""A dataset: its query manual, sample rows and notes from the digest, and a SQL box
that runs ``query`` and shows the rows. Errors and truncation hints are shown as the
engine words them."""

from __future__ import annotations

from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Static

from monkeyllm.errors import error_of
from monkeyllm.text import counted

from ..deliver import deliver
from ..heat import escape
from ..host import session_of


def manual_markup(digest: dict[str, Any]) -> str:
    """Tables with their columns and the example queries."""
    manual = digest.get("query_manual") or {}
    lines = [
        f"[b]{escape(str(digest.get('title')))}[/b]  [dim]{escape(digest['id'])}[/dim]",
        escape(str(digest.get("summary") or "")),
        "",
        "[b]Tables[/b]",
    ]
    for table, columns in (manual.get("tables") or {}).items():
        lines.append(f"  {escape(table)}({escape(', '.join(map(str, columns)))})")
    examples = manual.get("example_queries") or []
    if examples:
        lines.append("[b]Examples[/b]")
        lines.extend(f"  {escape(q)}" for q in examples)
    return "\n".join(lines)


def fill(table: DataTable, columns: list[Any], rows: list[list[Any]]) -> None:
    """Replace ``table``'s contents."""
    table.clear(columns=True)
    table.add_columns(*[str(c) for c in columns])
    for row in rows:
        table.add_row(*["" if v is None else str(v) for v in row])


class DatasetScreen(Screen[None]):
    """Read a dataset's manual and query it."""

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("ctrl+r", "run", "Run SQL"),
        Binding("question_mark", "app.help", "Keys", show=False),
    ]

    def __init__(self, digest: dict[str, Any]) -> None:
        super().__init__()
        self.digest = digest
        self.node_id: str = digest["id"]
        self.result: dict[str, Any] = {}

    def compose(self) -> ComposeResult:
        examples = (self.digest.get("query_manual") or {}).get("example_queries") or [""]
        yield Header()
        with VerticalScroll(id="dataset-info"):
            yield Static(manual_markup(self.digest), id="dataset-manual")
            yield Static("[b]Sample rows[/b]", classes="caption")
            yield DataTable(id="dataset-sample", zebra_stripes=True)
            notes = self.digest.get("notes")
            if notes:
                yield Static(
                    f"[b]Notes[/b]\n{escape(str(notes))}", id="dataset-notes", classes="caption"
                )
        with Vertical(id="dataset-query"):
            yield Input(examples[0], placeholder="SELECT … (Enter runs it)", id="sql")
            yield Static(
                "Enter runs the statement (read-only; LIMIT 200 is added when absent).",
                id="query-status",
            )
            yield DataTable(id="query-result", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.app.sub_title = f"{self.node_id} · query"
        sample = self.digest.get("sample_rows") or {}
        fill(
            self.query_one("#dataset-sample", DataTable),
            sample.get("columns") or [],
            sample.get("rows") or [],
        )
        self.query_one("#sql", Input).focus()

    @on(Input.Submitted, "#sql")
    def action_run(self) -> None:
        sql = self.query_one("#sql", Input).value.strip()
        if not sql:
            return
        self.query_one("#query-status", Static).update("Running…")
        self._query(sql)

    @work(thread=True, exclusive=True, group="query")
    def _query(self, sql: str) -> None:
        result = session_of(self).read("query", id=self.node_id, sql=sql)
        deliver(self, self._show, result)

    def _show(self, result: dict[str, Any]) -> None:
        self.result = result
        status = self.query_one("#query-status", Static)
        table = self.query_one("#query-result", DataTable)
        err = error_of(result)
        if err:
            table.clear(columns=True)
            status.update(
                f"[$error][b]{escape(str(err.get('code')))}[/b]: "
                f"{escape(str(err.get('message')))}[/]"
                + (f"\n{escape(str(err['hint']))}" if err.get("hint") else "")
            )
            status.add_class("error")
            return
        status.remove_class("error")
        fill(table, result.get("columns") or [], result.get("rows") or [])
        note = f"{counted(result.get('row_count') or 0, 'row')} in {result.get('elapsed_ms')} ms"
        if result.get("limited"):
            note += " · LIMIT 200 was added: there may be more rows"
        if result.get("truncated"):
            note += f"\n[$warning]{escape(str(result.get('hint') or 'truncated'))}[/]"
        status.update(note)

    def action_close(self) -> None:
        self.dismiss(None)
