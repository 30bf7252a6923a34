"""The forest as a tree of branches, loaded a level at a time as branches open."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import work
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from monkeyllm.errors import error_of
from monkeyllm.ids import trail_of

from ..deliver import deliver
from ..heat import escape, heat_colour
from ..host import session_of
from ..messages import Glance, Navigate

FIELDS = ["id", "title", "kind", "type", "coverage", "heat"]
# How long the cursor rests on a node before its digest is shown: arrowing through a
# branch reads one digest, where it stops.
GLANCE_S = 0.25
# A branch with more children than this shows the rest as one "more" line.
MAX_CHILDREN = 400


def label(node: dict[str, Any]) -> str:
    """A tree label: the title coloured by heat, then the coverage of a branch."""
    title = escape(str(node.get("title") or node["id"]))
    text = f"[{heat_colour(node.get('heat'))}]{title}[/]"
    coverage = node.get("coverage")
    if coverage:
        text += f" [dim]{escape(str(coverage).rstrip('.'))}[/dim]"
    return text


class ForestTree(Tree[str]):
    """Branches and leaves; a branch's children are read (``scan``) when it opens."""

    def __init__(self, title: str = "forest", **kwargs: Any) -> None:
        super().__init__(title, data="_index", **kwargs)
        self.show_root = True
        self.guide_depth = 3
        self.loaded: set[str] = set()
        self._pending_reveal: str | None = None
        self._glance: Any = None
        self._placed: str | None = None  # where the app (not a person) put the cursor
        self._chosen: str | None = None  # where a person's last key put the cursor

    def on_mount(self) -> None:
        self.load_children(self.root)

    def node_for(self, node_id: str) -> TreeNode[str] | None:
        """The tree node showing ``node_id``, when loaded."""
        if node_id == "_index":
            return self.root
        stack = [self.root]
        while stack:
            node = stack.pop()
            for child in node.children:
                if child.data == node_id:
                    return child
                if child.children:
                    stack.append(child)
        return None

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[str]) -> None:
        event.stop()
        if event.node.data not in self.loaded:
            self.load_children(event.node)

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[str]) -> None:
        """The digest follows the cursor, once it rests (debounced)."""
        event.stop()
        node_id = event.node.data
        self.cancel_glance()
        if not node_id or node_id.startswith("…") or node_id == self._placed:
            self._placed = None
            return
        # Only a person's key glances: a branch redrawn under the cursor (after a save,
        # a move or a delete) lands it on whatever node now has that line.
        if self.has_focus and node_id == self._chosen:
            self._glance = self.set_timer(GLANCE_S, lambda: self._rest(node_id))

    def _by_person(self) -> None:
        node = self.cursor_node
        self._chosen = node.data if node is not None else None

    def cancel_glance(self) -> None:
        """Forget a glance not yet shown (the person went somewhere else meanwhile)."""
        if self._glance is not None:
            self._glance.stop()
            self._glance = None

    def _rest(self, node_id: str) -> None:
        self._glance = None
        if self.has_focus and self.cursor_node is not None and self.cursor_node.data == node_id:
            self.post_message(Glance(node_id))

    def on_tree_node_selected(self, event: Tree.NodeSelected[str]) -> None:
        event.stop()
        if event.node.data and not event.node.data.startswith("…"):
            self.post_message(Navigate(event.node.data))

    def load_children(self, node: TreeNode[str]) -> None:
        """Read the children of ``node``'s branch in a worker."""
        if node.data is not None:
            self.loaded.add(node.data)
            self._fetch(node.data)

    @work(thread=True, group="tree")
    def _fetch(self, branch: str) -> None:
        children, error = fetch_children(session_of(self), branch)
        deliver(self, self._fill, branch, children, error)

    def _fill(self, branch: str, children: list[dict[str, Any]], error: str | None) -> None:
        node = self.node_for(branch)
        if node is None:
            return
        if error:
            self.loaded.discard(branch)
            self.notify(error, title="Could not list the branch", severity="error")
            return
        node.remove_children()
        for child in children[:MAX_CHILDREN]:
            if child.get("kind") == "branch":
                node.add(label(child), data=child["id"])
            else:
                node.add_leaf(label(child), data=child["id"])
        if len(children) > MAX_CHILDREN:
            node.add_leaf(
                f"[dim]… {len(children) - MAX_CHILDREN} more (use search)[/dim]", data="…"
            )
        node.expand()
        if self._pending_reveal:
            self.reveal(self._pending_reveal)

    def reveal(self, node_id: str) -> None:
        """Open the branches down to ``node_id`` and move the cursor onto it."""
        self._pending_reveal = node_id
        for ancestor in trail_of(node_id):
            node = self.node_for(ancestor)
            if node is None:
                return
            if ancestor not in self.loaded:
                self.load_children(node)
                return
            if not node.is_expanded:
                node.expand()
        self._pending_reveal = None
        # After the refresh: a branch opened just now has no line in the tree yet.
        self.call_after_refresh(self._cursor_to, node_id)

    def _cursor_to(self, node_id: str) -> None:
        target = self.node_for(node_id)
        if target is not None and target is not self.cursor_node:
            self._placed = node_id  # the node shown already: no glance for it
            self.move_cursor(target, animate=False)

    def relabel(self, node: dict[str, Any]) -> None:
        """Redraw one node's label (after a save changed its title)."""
        found = self.node_for(node["id"])
        if found is not None and found is not self.root:
            found.set_label(label(node))


def fetch_children(session: Any, branch: str) -> tuple[list[dict[str, Any]], str | None]:
    """Every child of ``branch`` (paged by id; branches first, then by title)."""
    children: list[dict[str, Any]] = []
    after = ""
    while len(children) <= MAX_CHILDREN:
        page = session.read("scan", parent_id=branch, fields=FIELDS, limit=50, after=after)
        err = error_of(page)
        if err:
            return children, f"{err.get('code')}: {err.get('message')}"
        children.extend(page.get("nodes", []))
        after = page.get("next")
        if not after:
            break
    children.sort(key=lambda n: (n.get("kind") != "branch", str(n.get("title") or n["id"]).lower()))
    return children, None


def _then_by_person(name: str) -> Callable[[ForestTree], None]:
    """Tree's action ``name``, then the node the cursor lands on is the person's choice."""

    def action(self: ForestTree) -> None:
        getattr(super(ForestTree, self), name)()
        self._by_person()

    action.__name__ = action.__qualname__ = name
    return action


# Every key that moves the cursor is a person's: the node it lands on may glance.
for _name in (
    "action_cursor_up",
    "action_cursor_down",
    "action_page_up",
    "action_page_down",
    "action_scroll_home",
    "action_scroll_end",
    "action_cursor_parent",
    "action_cursor_parent_next_sibling",
    "action_cursor_previous_sibling",
    "action_cursor_next_sibling",
):
    setattr(ForestTree, _name, _then_by_person(_name))
del _name
