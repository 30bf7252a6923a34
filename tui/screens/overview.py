"""What the forest holds (``coverage``) and when (``calendar``), on one screen."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from monkeyllm.errors import error_of

from ..deliver import deliver
from ..host import session_of

BAR = 30


def regions_table(coverage: dict[str, Any]) -> Table:
    """The regions with their sizes and dates, then the totals as a caption."""
    table = Table(title="Regions", title_justify="left", expand=True)
    for column in ("region", "nodes", "branches", "from", "to", "origin"):
        table.add_column(column, overflow="fold")
    for root in coverage.get("roots", []):
        table.add_row(
            str(root.get("title") or root["id"]),
            str(root.get("nodes")),
            str(root.get("branches")),
            str(root.get("first") or "—"),
            str(root.get("last") or "—"),
            str(root.get("origin") or "—"),
        )
    types = ", ".join(f"{k} {v}" for k, v in (coverage.get("types") or {}).items())
    table.caption = (
        f"{coverage.get('total')} nodes ({types}); "
        f"{coverage.get('undated')} undated; {coverage.get('system')} system"
    )
    return table


def calendar_table(calendar: dict[str, Any]) -> Table:
    """One bar per month, newest first."""
    table = Table(title=f"By month ({calendar.get('date_field')})", title_justify="left")
    table.add_column("period")
    table.add_column("nodes", justify="right")
    table.add_column("")
    buckets = calendar.get("buckets", [])
    most = max((b.get("nodes", 0) for b in buckets), default=0)
    for bucket in buckets:
        n = bucket.get("nodes", 0)
        width = max(1, round(n / most * BAR)) if most and n else 0
        table.add_row(str(bucket.get("period")), str(n), Text("█" * width, style="cyan"))
    return table


class OverviewScreen(ModalScreen[None]):
    """The forest at a glance."""

    BINDINGS = [Binding("escape,c,q", "close", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="overview"):
            yield Label("The forest at a glance", classes="dialog-title")
            yield Static("Counting ...", id="overview-regions")
            yield Static("", id="overview-calendar")

    def on_mount(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="overview")
    def _load(self) -> None:
        session = session_of(self)
        deliver(
            self,
            self._fill,
            session.read("coverage"),
            session.read("calendar", granularity="month", limit=36),
        )

    def _fill(self, coverage: dict[str, Any], calendar: dict[str, Any]) -> None:
        regions = self.query_one("#overview-regions", Static)
        for out in (coverage, calendar):
            err = error_of(out)
            if err:
                regions.update(f"{err.get('code')}: {err.get('message')}")
                return
        regions.update(regions_table(coverage))
        self.query_one("#overview-calendar", Static).update(calendar_table(calendar))

    def action_close(self) -> None:
        self.dismiss(None)
