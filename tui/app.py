"""``BrowseApp``: the Textual application behind ``vine browse``."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from textual import events
from textual.app import App, SystemCommand
from textual.screen import Screen
from textual.widgets import Input, TextArea

from monkeyllm.errors import error_of
from monkeyllm.ids import trail_of
from monkeyllm.lock import who

from .screens.browse import BrowseScreen
from .session import Session
from .widgets.trail_bar import crumb


class BrowseApp(App[None]):
    """Browse and curate one forest: tree, digest, reader, search, datasets, edits."""

    CSS_PATH = "vine.tcss"
    TITLE = "vine browse"
    BINDINGS = [("q", "quit", "Quit")]

    def __init__(self, forest: Path | str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.session = Session(Path(forest), on_lock_wait=self._waiting)
        self.browse = BrowseScreen()

    def get_default_screen(self) -> Screen[Any]:
        return self.browse

    def on_unmount(self) -> None:
        self.session.close()

    def on_key(self, event: events.Key) -> None:
        """Keys typed right after the key that opened a dialog or the search box reach
        the widgets under it first (the box is not up yet) and come back unused: hand
        them to the field that now has the focus, in order, instead of losing them. A
        key typed into a field never comes back here: the field keeps it."""
        target = self.screen.focused
        if event.is_forwarded and event.is_printable and isinstance(target, Input | TextArea):
            event.stop()
            target.post_message(events.Key(event.key, event.character))

    def reopen(self, forest: Path | str) -> None:
        """Browse another forest in the same window (a writable copy just made)."""
        old = self.session
        self.session = Session(Path(forest), on_lock_wait=self._waiting)
        old.close()
        self.browse.restart()

    @property
    def is_ready(self) -> bool:
        """True once the first screen is usable: the tree's first level and a digest."""
        tree = self.browse.query("#tree")
        return bool(self.browse.digest) and bool(tree) and bool(tree.first().root.children)

    def _waiting(self, card: dict[str, object]) -> None:
        """A save waits for another writer: say so (from the saving thread)."""
        text = f"Waiting for the writer lock: {who(card)} is writing."
        try:
            self.call_from_thread(self.notify, text, title="Saving", timeout=4)
        except RuntimeError:  # called on the app's own thread
            self.notify(text, title="Saving", timeout=4)

    def report(self, envelope: dict[str, Any], title: str) -> None:
        """Show an error envelope as a notification (never a crash)."""
        err = error_of(envelope) or {}
        text = f"{err.get('code', 'E_INTERNAL')}: {err.get('message', '')}"
        if err.get("code") == "E_LOCKED":
            text = (
                "Another writer holds the forest, so nothing was saved. "
                f"Browsing goes on. ({err.get('message', '')})"
            )
        elif err.get("code") == "E_CONFLICT":
            text = (
                "Someone else changed this node since it was shown, so nothing was "
                f"saved; it is shown as it is now. ({err.get('message', '')})"
            )
        if err.get("hint") and err.get("code") != "E_CONFLICT":
            text += f"\n{err['hint']}"
        self.notify(text, title=title, severity="error", timeout=8)

    def action_help(self) -> None:
        from .screens.help import HelpScreen

        self.push_screen(HelpScreen())

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        browse = self.browse
        yield SystemCommand("Search", "Search the forest (locate or sniff)", browse.action_search)
        yield SystemCommand("Read", "Read the current node's body", browse.action_read)
        yield SystemCommand("Dataset", "Query the current dataset", browse.action_dataset)
        yield SystemCommand("Back", "Go back in the history", browse.action_back)
        yield SystemCommand("Forward", "Go forward in the history", browse.action_forward)
        yield SystemCommand("Edit", "Edit the title, summary and tags (graft)", browse.action_edit)
        yield SystemCommand(
            "Add link", "Add a typed link to another node (graft)", browse.action_link
        )
        yield SystemCommand(
            "Append section", "Append a section to the body (graft)", browse.action_append
        )
        yield SystemCommand(
            "Plant note", "Plant a new note under the current branch", browse.action_plant
        )
        yield SystemCommand(
            "Move", "Move or rename the current leaf (transplant)", browse.action_transplant
        )
        yield SystemCommand("Delete", "Delete the current node (prune)", browse.action_prune)
        yield SystemCommand(
            "History", "The commits that changed the current node", browse.action_history
        )
        yield SystemCommand(
            "Overview",
            "What the forest holds, and when (coverage, calendar)",
            browse.action_overview,
        )
        yield SystemCommand("Key map", "Show every key", self.action_help)
        for ancestor in trail_of(browse.current or "_index"):
            yield SystemCommand(
                f"Go to {crumb(ancestor)}",
                f"Jump to the ancestor {ancestor}",
                lambda a=ancestor: browse.go(a),
            )
