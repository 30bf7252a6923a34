"""The main screen: the forest tree, the digest of the current node, the trail and
the heat scale. It owns navigation (hops, back, forward) and saving."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from monkeyllm.errors import error_of
from monkeyllm.ids import parent_of, trail_of

from ..deliver import deliver
from ..history import History
from ..host import browser, session_of
from ..messages import Glance, Navigate, ReadSection
from ..widgets.digest import DigestPanel
from ..widgets.forest_tree import ForestTree
from ..widgets.heat_legend import HeatLegend
from ..widgets.trail_bar import TrailBar


def neighbour_heat(session: Any, node_id: str, digest: dict[str, Any]) -> dict[str, float]:
    """The heat of each neighbour of ``node_id`` (``move`` carries it; look does not)."""
    heat: dict[str, float] = {}
    moves = [session.read("move", id=node_id, direction="both")]
    if digest.get("children"):
        moves.append(session.read("move", id=node_id, rel="children"))
    for moved in moves:
        for n in moved.get("neighbors", []) if not error_of(moved) else []:
            heat[n["id"]] = max(heat.get(n["id"], 0.0), n.get("heat") or 0.0)
    return heat


class BrowseScreen(Screen[None]):
    """Tree on the left, digest on the right; every engine call runs in a worker."""

    # Keys and Quit come first: on an 80-column terminal the footer has room for about
    # nine keys, and these two are the ones a newcomer looks for.
    BINDINGS = [
        Binding("question_mark", "app.help", "Keys"),
        Binding("q", "app.quit", "Quit"),
        Binding("left_square_bracket", "back", "Back"),
        Binding("right_square_bracket", "forward", "Forward"),
        Binding("u", "up", "Up"),
        Binding("r", "read", "Read"),
        Binding("slash", "search", "Search"),
        Binding("d", "dataset", "Dataset"),
        Binding("e", "edit", "Edit"),
        Binding("l", "link", "Link"),
        Binding("a", "append", "Append"),
        Binding("p", "plant", "Plant"),
        Binding("w", "copy", "Writable copy"),
        Binding("m", "transplant", "Move", show=False),
        Binding("x,delete", "prune", "Delete", show=False),
        Binding("h", "history", "History", show=False),
        Binding("c", "overview", "Overview", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.history = History()
        self.digest: dict[str, Any] | None = None
        self.last_commit: str | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield TrailBar("forest", id="trail")
        with Horizontal(id="main"):
            yield ForestTree(id="tree")
            yield DigestPanel(id="digest")
        with Horizontal(id="status"):
            yield HeatLegend(id="legend")
            yield Static("", id="status-text")
            yield Static("", id="mode")
        yield Footer()

    def on_mount(self) -> None:
        self.go("_index")
        self.query_one(ForestTree).focus()
        self.show_writer()
        self.set_interval(2.0, self.show_writer)
        self.say_read_only()

    def say_read_only(self) -> None:
        """Say up front, not at a save, when this forest cannot be written, and how to
        try edits anyway."""
        reason = session_of(self).cannot_write
        if reason:
            self.notify(
                f"Browsing only: {reason}. Press w to work on a writable copy.",
                title="This forest is read-only",
                severity="warning",
                timeout=12,
            )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The copy key is offered only where saving cannot work."""
        if action == "copy":
            return bool(session_of(self).cannot_write)
        return True

    def restart(self) -> None:
        """Start over on the app's (new) session: the tree, the history, the root."""
        tree = self.query_one(ForestTree)
        tree.reset(tree.root.label, data="_index")
        tree.loaded.clear()
        tree.load_children(tree.root)
        self.history = History()
        self.digest = None
        self.go("_index")
        self.show_writer()
        self.refresh_bindings()

    def on_screen_resume(self) -> None:
        self.app.sub_title = self.current or ""

    def show_writer(self) -> None:
        """Say whether another process holds the writer lock (a stat, no lock taken)."""
        session = session_of(self)
        writer = session.writer()
        mode = self.query_one("#mode", Static)
        if session.cannot_write:
            mode.update(
                "[$warning]read-only: not its own git repository; w makes a writable copy[/]"
            )
        elif writer:
            mode.update(
                f"[$warning]{escape(writer)} holds the forest open for writing: browsing "
                "works, saves answer E_LOCKED until it lets go[/]"
            )
        else:
            mode.update("[dim]saves lock the forest only while they write[/dim]")

    # -- navigation ----------------------------------------------------------------

    @property
    def current(self) -> str | None:
        """The id of the node shown."""
        return self.history.current

    def go(self, node_id: str, record: bool = True, glance: bool = False) -> None:
        """Show ``node_id`` (look, plus the heat of its neighbours) in a worker."""
        if not glance:
            for tree in self.query(ForestTree):
                tree.cancel_glance()
        self._look(node_id, record, glance)

    @work(thread=True, exclusive=True, group="look")
    def _look(self, node_id: str, record: bool, glance: bool = False) -> None:
        session = session_of(self)
        digest = session.read("look", id=node_id)
        heat = {} if error_of(digest) else neighbour_heat(session, node_id, digest)
        deliver(self, self._show, node_id, digest, heat, record, glance)

    def _show(
        self,
        node_id: str,
        digest: dict[str, Any],
        heat: dict[str, float],
        record: bool,
        glance: bool = False,
    ) -> None:
        err = error_of(digest)
        if err:
            browser(self).report(digest, f"Cannot open {node_id}")
            return
        if record:
            self.history.visit(node_id, glance)
        self.digest = digest
        self.query_one(DigestPanel).show(digest, heat)
        self.query_one(TrailBar).show(node_id, trail_of(node_id))
        tree = self.query_one(ForestTree)
        if node_id == "_index":
            tree.root.set_label(str(digest.get("title") or "forest"))
        tree.reveal(node_id)
        self.app.sub_title = node_id  # type: ignore[has-type]

    def on_navigate(self, message: Navigate) -> None:
        self.go(message.node_id)

    def on_glance(self, message: Glance) -> None:
        if message.node_id != self.current:
            self.go(message.node_id, glance=True)

    def on_read_section(self, message: ReadSection) -> None:
        self.open_reader(message.node_id, message.section)

    def action_back(self) -> None:
        self._revisit(self.history.back(), "back")

    def action_forward(self) -> None:
        self._revisit(self.history.forward(), "forward")

    def _revisit(self, node_id: str | None, way: str) -> None:
        """Go to a node of the history (without recording the step), or say there is none."""
        if node_id is None:
            self.notify(f"Nothing further {way}.")
        else:
            self.go(node_id, record=False)

    def action_up(self) -> None:
        parent = parent_of(self.current or "_index")
        if parent:
            self.go(parent)

    def action_jump(self, node_id: str) -> None:
        """Jump to an ancestor on the trail (a click in the trail bar)."""
        self.go(node_id)

    # -- other screens -------------------------------------------------------------

    def open_reader(self, node_id: str, section: str | None = None) -> None:
        from .reader import ReaderScreen

        self.app.push_screen(ReaderScreen(node_id, section), self._after_reader)

    def _after_reader(self, target: str | None) -> None:
        if target:
            self.go(target)

    def action_read(self) -> None:
        if self.current:
            self.open_reader(self.current)

    def action_search(self) -> None:
        from .search import SearchScreen

        self.app.push_screen(SearchScreen(), self._after_reader)

    def action_dataset(self) -> None:
        if not self.digest or self.digest.get("type") != "dataset":
            self.notify("The current node is not a dataset.", severity="warning")
            return
        from .dataset import DatasetScreen

        self.app.push_screen(DatasetScreen(self.digest))

    # -- curation ------------------------------------------------------------------

    def action_edit(self) -> None:
        if not self.digest or not self.writable():
            return
        from ..dialogs.edit_node import EditNodeDialog

        self.app.push_screen(EditNodeDialog(self.digest), self._graft)

    def action_link(self) -> None:
        if not self.digest or not self.writable():
            return
        from ..dialogs.add_link import AddLinkDialog

        self.app.push_screen(AddLinkDialog(self.digest["id"]), self._graft)

    def action_append(self) -> None:
        if not self.digest or not self.writable():
            return
        from ..dialogs.append_section import AppendSectionDialog

        self.app.push_screen(AppendSectionDialog(self.digest["id"]), self._graft)

    def action_plant(self) -> None:
        if not self.current or not self.writable():
            return
        from ..dialogs.plant_note import PlantNoteDialog

        branch = (
            self.current
            if self.digest and self.digest.get("type") == "branch"
            else parent_of(self.current) or "_index"
        )
        self.app.push_screen(PlantNoteDialog(branch), self._plant)

    def writable(self) -> bool:
        """True when saves can work; else offer the writable copy instead of a dialog
        whose save would fail."""
        if not session_of(self).cannot_write:
            return True
        self.action_copy()
        return False

    def action_copy(self) -> None:
        session = session_of(self)
        if not session.cannot_write:
            self.notify("This forest can be written already: edits save here.")
            return
        from ..dialogs.copy_forest import CopyForestDialog

        # The dialog says why the forest is read-only: the notice saying the same would
        # lie over it (on 80 columns, over its field and its keys) for its 12 seconds.
        self.app.clear_notifications()
        self.app.push_screen(CopyForestDialog(session.root, session.cannot_write), self._copy)

    def _copy(self, answer: dict[str, Any] | None) -> None:
        if answer:
            self.query_one("#status-text", Static).update(f"Copying to {answer['dest']}…")
            self._copy_to(answer["dest"])

    @work(thread=True, group="save")
    def _copy_to(self, dest: str) -> None:
        result = session_of(self).copy(dest)
        self.app.call_from_thread(self._copied, result)

    def _copied(self, result: dict[str, Any]) -> None:
        if error_of(result):
            browser(self).report(result, "No copy was made")
            return
        browser(self).reopen(result["forest"])
        text = (
            f"Now on a writable copy at {result['forest']}: each save is a commit "
            "there, and the original is untouched."
        )
        self.query_one("#status-text", Static).update(text)
        self.notify(text, title="Writable copy")

    def action_transplant(self) -> None:
        if not self.digest or not self.writable():
            return
        if self.digest.get("type") == "branch" or self.digest["id"].startswith("_meta/"):
            self.notify(
                "Only leaves move; a branch's nodes move one at a time.", severity="warning"
            )
            return
        from ..dialogs.transplant_node import TransplantDialog

        node_id = self.digest["id"]
        self.app.push_screen(
            TransplantDialog(node_id, str(self.digest.get("title") or "")),
            lambda got: got and self.save("transplant", node_id, id=node_id, **got),
        )

    def action_prune(self) -> None:
        if not self.digest or not self.writable():
            return
        from ..dialogs.prune_node import PruneDialog

        node_id = self.digest["id"]
        self.app.push_screen(
            PruneDialog(node_id),
            lambda got: got is not None and self.save("prune", node_id, id=node_id, **got),
        )

    def action_history(self) -> None:
        if not self.current:
            return
        from .node_history import HistoryScreen

        self.app.push_screen(HistoryScreen(self.current))

    def action_overview(self) -> None:
        from .overview import OverviewScreen

        self.app.push_screen(OverviewScreen())

    def _graft(self, patch: dict[str, Any] | None) -> None:
        if patch and self.current:
            self.save("graft", self.current, id=self.current, patch=patch)

    def _plant(self, node: dict[str, Any] | None) -> None:
        if node:
            self.save("plant", node["id"], node=node)

    def _reorganized(self, call: str, node_id: str, result: dict[str, Any]) -> None:
        """After a prune or a move: the tree's branches that changed, the history's
        ids, then the node where it went (or its old parent)."""
        tree = self.query_one(ForestTree)
        new_id = result.get("new_id") if call == "transplant" else None
        for branch in dict.fromkeys(
            [parent_of(node_id) or "_index", *([parent_of(new_id) or "_index"] if new_id else [])]
        ):
            found = tree.node_for(branch)
            if found is not None:
                tree.load_children(found)
        self.history.replace(node_id, new_id)
        self.go(new_id or parent_of(node_id) or "_index")

    @work(thread=True, group="save")
    def save(self, call: str, node_id: str, **args: Any) -> None:
        """Run one write (the lock is taken for it alone), then show its commit."""
        result = session_of(self).write(call, **args)
        self.app.call_from_thread(self._saved, call, node_id, result)

    def _saved(self, call: str, node_id: str, result: dict[str, Any]) -> None:
        err = error_of(result)
        if err:
            browser(self).report(result, f"{call} was not saved")
            if err.get("code") == "E_CONFLICT":
                self.go(node_id)  # show what the other writer left
            return
        commit = result.get("commit")
        if commit:
            self.last_commit = commit
            text = f"{call}({node_id}) saved in commit {commit[:12]}"
        else:
            text = f"{call}({node_id}): nothing changed on disk, no commit"
            if result.get("fortified"):
                text += " (the link existed: it was fortified)"
        self.query_one("#status-text", Static).update(text)
        self.notify(text, title="Saved")
        if call in ("prune", "transplant"):
            self._reorganized(call, node_id, result)
            return
        if call == "plant":
            tree = self.query_one(ForestTree)
            parent = parent_of(node_id) or "_index"
            found = tree.node_for(parent)
            if found is not None:
                tree.load_children(found)
        else:
            tree = self.query_one(ForestTree)
            found = tree.node_for(node_id)
            if found is not None and parent_of(node_id):
                parent = tree.node_for(parent_of(node_id) or "_index")
                if parent is not None:
                    tree.load_children(parent)
        self.go(node_id)
