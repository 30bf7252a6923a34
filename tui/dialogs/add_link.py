"""Add a typed link from the current node to one picked by search (one ``graft``)."""

from __future__ import annotations

from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.suggester import SuggestFromList
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from ..deliver import deliver
from ..heat import escape
from ..host import session_of
from .form import NodeForm, field

COMMON_RELS = [
    "related-to",
    "mentions",
    "mentioned-in",
    "part-of",
    "supersedes",
    "succeeds",
    "derived-from",
    "discovered-shortcut",
]


class AddLinkDialog(NodeForm):
    """Dismisses with ``{"add_links": [{rel, target}]}``."""

    TITLE_TEXT = "Add a typed link"
    AUTO_FOCUS = "#link-search"

    def __init__(self, node_id: str) -> None:
        super().__init__(node_id)
        self.target: str | None = None

    def fields(self) -> ComposeResult:
        yield Label(f"Relation (from {self.node_id})")
        yield field(
            "related-to",
            id="link-rel",
            suggester=SuggestFromList(COMMON_RELS, case_sensitive=False),
        )
        yield Label("Target: type to search, then pick one")
        yield field(placeholder="search the forest", id="link-search")
        yield OptionList(id="link-targets")
        yield Label("No target picked yet.", id="link-picked")

    @on(Input.Changed, "#link-search")
    def _search(self, event: Input.Changed) -> None:
        if len(event.value.strip()) >= 2:
            self._locate(event.value.strip())

    @work(thread=True, exclusive=True, group="link-search")
    def _locate(self, text: str) -> None:
        found = session_of(self).read("locate", query=text, k=10)
        deliver(self, self._fill, found.get("results", []))

    def _fill(self, results: list[dict[str, Any]]) -> None:
        targets = self.query_one("#link-targets", OptionList)
        targets.clear_options()
        targets.add_options(
            [
                Option(
                    f"{escape(str(r.get('title')))}  [dim]{escape(r['id'])}[/dim]",
                    id=f"{n}:{r['id']}",
                )
                for n, r in enumerate(results)
            ]
        )

    def submit(self, box: Input) -> None:
        """Enter in the search box goes to its results (a target is picked there);
        elsewhere, once a target is picked, it saves."""
        targets = self.query_one("#link-targets", OptionList)
        if box.id == "link-search" and targets.option_count:
            targets.focus()
            targets.highlighted = 0
        else:
            self.action_save()

    @on(OptionList.OptionSelected, "#link-targets")
    def _pick(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.target = (event.option.id or "").partition(":")[2]
        self.query_one("#link-picked", Label).update(f"Target: {self.target}")

    def collect(self) -> dict[str, Any] | None:
        rel = self.query_one("#link-rel", Input).value.strip()
        if not rel or not self.target:
            self.complain("Choose a relation and pick a target.")
            return None
        return {"add_links": [{"rel": rel, "target": self.target}]}
