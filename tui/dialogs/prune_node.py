"""Delete a node (one ``prune``): what goes first (its dry run), the links that anchor
it, and a box to tick before they are dropped too."""

from __future__ import annotations

from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Label, Static

from monkeyllm.errors import error_of
from monkeyllm.text import counted

from ..deliver import deliver
from ..heat import escape
from ..host import session_of


def preview_markup(node_id: str, preview: dict[str, Any]) -> str:
    """What a prune removes, from its dry run."""
    lines = [
        f"[b]{escape(node_id)}[/b]  [dim]{escape(str(preview.get('type') or ''))}: "
        f"{escape(str(preview.get('title') or ''))}[/dim]",
        "The file leaves the tree; git keeps it ([dim]git revert[/dim] brings it back).",
    ]
    if preview.get("indexes"):
        lines.append("Its entry leaves " + escape(", ".join(preview["indexes"])) + ".")
    if preview.get("payload_moved"):
        lines.append(f"Its payload moves to {escape(preview['payload_moved'])} (kept).")
    return "\n".join(lines)


def anchors_markup(error: dict[str, Any]) -> str:
    """The links that keep a node from being pruned."""
    count = error.get("anchor_count", 0)
    lines = [f"[$warning]{counted(count, 'link')} in other nodes point here:[/]"]
    lines += [
        f"  {escape(str(a.get('source')))} [dim]({escape(str(a.get('rel')))})[/dim]"
        for a in error.get("anchors", [])
    ]
    if count > len(error.get("anchors", [])):
        lines.append(f"  [dim]... and {count - len(error['anchors'])} more[/dim]")
    if error.get("out_of_scope"):
        lines.append(f"[$error]{error['out_of_scope']} more from nodes you cannot see.[/]")
    return "\n".join(lines)


class PruneDialog(ModalScreen[dict[str, Any] | None]):
    """Dismisses with ``{"force": bool}`` to prune, or None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, node_id: str) -> None:
        super().__init__()
        self.node_id = node_id
        self.anchored = False

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog"):
            yield Label(f"Delete {self.node_id}?", classes="dialog-title")
            yield Static("Checking what would go ...", id="prune-preview")
            yield Static("", id="prune-anchors")
            yield Checkbox("Also drop those links (force)", id="prune-force", disabled=True)
            yield Static("", classes="dialog-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Delete", variant="error", id="prune-go", disabled=True)
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#prune-force").display = False
        self._rehearse()

    @work(thread=True, exclusive=True, group="prune-preview")
    def _rehearse(self) -> None:
        session = session_of(self)
        plain = session.write("prune", id=self.node_id, dry_run=True)
        forced = None
        err = error_of(plain)
        if err and err.get("code") == "E_ANCHORED" and "anchors" in err:
            forced = session.write("prune", id=self.node_id, force=True, dry_run=True)
        deliver(self, self._show, plain, forced)

    def _show(self, plain: dict[str, Any], forced: dict[str, Any] | None) -> None:
        preview = self.query_one("#prune-preview", Static)
        err = error_of(plain)
        if err is None:
            preview.update(preview_markup(self.node_id, plain))
            self.query_one("#prune-go", Button).disabled = False
            return
        if forced is None or error_of(forced):
            # A branch with children, hidden anchors, the frame, a lock: no way through.
            why = error_of(forced) if forced is not None else err
            text = f"[$error]{escape(str(why.get('message')))}[/]"
            if why.get("hint"):
                text += f"\n[dim]{escape(str(why['hint']))}[/dim]"
            preview.update(text)
            return
        self.anchored = True
        preview.update(preview_markup(self.node_id, forced))
        self.query_one("#prune-anchors", Static).update(anchors_markup(err))
        box = self.query_one("#prune-force", Checkbox)
        count = err.get("anchor_count", 0)
        those = "that link" if count == 1 else f"those {counted(count, 'link')}"
        box.label = f"Also drop {those} (force)"
        box.display = True
        box.disabled = False

    @on(Checkbox.Changed, "#prune-force")
    def _forced(self, event: Checkbox.Changed) -> None:
        self.query_one("#prune-go", Button).disabled = not event.value

    @on(Button.Pressed, "#prune-go")
    def _go(self) -> None:
        force = self.anchored and self.query_one("#prune-force", Checkbox).value
        if self.anchored and not force:
            return
        self.dismiss({"force": force})

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
