"""Move or rename a leaf (one ``transplant``): the new id, and as it is typed, what the
move would rewrite (its dry run)."""

from __future__ import annotations

from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.widgets import Input, Label, Static

from monkeyllm.errors import error_of
from monkeyllm.text import counted

from ..deliver import deliver
from ..heat import escape
from ..host import session_of
from .form import NodeForm

SHOWN = 8


def plan_markup(plan: dict[str, Any]) -> str:
    """What a transplant would do, or why it would not."""
    err = error_of(plan)
    if err:
        return f"[$error]{escape(str(err.get('message')))}[/]" + (
            f"\n[dim]{escape(str(err['hint']))}[/dim]" if err.get("hint") else ""
        )
    count = plan.get("backlinks_rewritten", 0)
    sources = plan.get("sources") or []
    nodes = counted(plan.get("source_count", len(sources)), "node")
    lines = [f"Rewrites {counted(count, 'link')} in {nodes}" + (":" if sources else ".")]
    lines += [f"  {escape(s)}" for s in sources[:SHOWN]]
    if len(sources) > SHOWN:
        lines.append(f"  [dim]... and {len(sources) - SHOWN} more[/dim]")
    if plan.get("payload_moved"):
        lines.append(f"Its payload moves to {escape(plan['payload_moved'])}.")
    lines.append("[dim]The old id stays as a waymark: reads of it lead here.[/dim]")
    return "\n".join(lines)


def proposal(node_id: str, title: str) -> str:
    """The id to propose: the leaf named after the title, in the same branch (the id
    itself when that is what it already is, or the title gives no name)."""
    from .plant_note import slugify

    slug = slugify(title)
    if not slug:
        return node_id
    folder = node_id.rsplit("/", 1)[0] + "/" if "/" in node_id else ""
    return folder + slug


class TransplantDialog(NodeForm):
    """Dismisses with ``{"new_id": ...}``."""

    TITLE_TEXT = "Move or rename"

    def __init__(self, node_id: str, title: str = "") -> None:
        super().__init__(node_id)
        self.proposal = proposal(node_id, title)

    def fields(self) -> ComposeResult:
        yield Label(f"New id for {self.node_id} (its branch must exist)")
        yield Input(self.proposal, id="move-id")
        yield Static("Type the new id: what the move rewrites shows here.", id="move-plan")

    def on_mount(self) -> None:
        field = self.query_one("#move-id", Input)
        field.focus()
        field.cursor_position = len(field.value)
        if self.proposal != self.node_id:
            self._rehearse(self.proposal)

    @on(Input.Changed, "#move-id")
    def _typed(self, event: Input.Changed) -> None:
        new_id = event.value.strip()
        if new_id and new_id != self.node_id:
            self._rehearse(new_id)
        else:
            self.query_one("#move-plan", Static).update(
                "Type the new id: what the move rewrites shows here."
            )

    @work(thread=True, exclusive=True, group="move-plan")
    def _rehearse(self, new_id: str) -> None:
        plan = session_of(self).write("transplant", id=self.node_id, new_id=new_id, dry_run=True)
        deliver(self, self._show, new_id, plan)

    def _show(self, new_id: str, plan: dict[str, Any]) -> None:
        if self.query_one("#move-id", Input).value.strip() == new_id:
            self.query_one("#move-plan", Static).update(plan_markup(plan))

    def collect(self) -> dict[str, Any] | None:
        new_id = self.query_one("#move-id", Input).value.strip()
        if not new_id or new_id == self.node_id:
            self.complain("Give the id it should move to.")
            return None
        return {"new_id": new_id}
