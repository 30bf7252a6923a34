"""What the curation dialogs share: a titled form with Save and Cancel."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static


def field(value: str = "", **options: Any) -> Input:
    """A dialog's text field: focusing it puts the cursor after what it holds, and
    never selects it (typing must add to a summary, not replace it)."""
    box = Input(value, select_on_focus=False, **options)
    box.cursor_position = len(value)
    return box


class FormDialog(ModalScreen[dict[str, Any] | None]):
    """A modal form; subclasses yield fields and build the result in ``collect``.

    The field ``AUTO_FOCUS`` names (the first text field by default) has the focus as
    the dialog opens, so the first keystrokes land in it. Enter in a one-line field
    saves, as Ctrl+S does anywhere in the form; in a form with a body to write
    (``ENTER_SAVES`` false) it moves on to the next field instead. A line under the
    buttons says so (``KEYS_TEXT``): the app's footer, under the dialog, shows the
    browser's keys, not the dialog's."""

    TITLE_TEXT = "Edit"
    AUTO_FOCUS = "Input, TextArea"
    ENTER_SAVES = True
    KEYS_TEXT = "Enter or Ctrl+S saves · Tab moves between fields · Esc cancels"
    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("ctrl+s", "save", "Save")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog"):
            yield Label(self.TITLE_TEXT, classes="dialog-title")
            yield from self.fields()
            yield Static("", classes="dialog-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save", variant="primary", id="save")
                yield Button("Cancel", id="cancel")
            yield Static(self.KEYS_TEXT, classes="dialog-keys")

    def fields(self) -> ComposeResult:
        """The form's inputs."""
        yield from ()

    def collect(self) -> dict[str, Any] | None:
        """The result to save, or None after calling ``complain``."""
        raise NotImplementedError

    def complain(self, text: str) -> None:
        """Show why the form cannot be saved yet."""
        self.query_one(".dialog-error", Static).update(f"[$error]{text}[/]")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.submit(event.input)

    def submit(self, box: Input) -> None:
        """Enter in the one-line field ``box``: save, or go on to the next field."""
        if self.ENTER_SAVES:
            self.action_save()
        else:
            self.focus_next()

    @on(Button.Pressed, "#save")
    def action_save(self) -> None:
        result = self.collect()
        if result is not None:
            self.dismiss(result)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class NodeForm(FormDialog):
    """A form about one node of the forest, ``node_id``."""

    def __init__(self, node_id: str) -> None:
        super().__init__()
        self.node_id = node_id
