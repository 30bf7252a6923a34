"""The digest of the current node (``look``): a header and a list of where to go next.

The list holds the outline (Enter reads that section), the children of a branch and
the edges out and in, each coloured by heat; Enter or a click follows it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from monkeyllm import budget

from ..heat import escape, heat_colour, heat_dot, heat_markup
from ..messages import Navigate, ReadSection


def head_markup(digest: dict[str, Any]) -> str:
    """The top of the digest: title, type, summary, tags and what the body costs."""
    stats = digest.get("stats") or {}
    heat = stats.get("heat")
    lines = [
        f"[b]{escape(str(digest.get('title') or digest['id']))}[/b]  "
        f"[dim]{escape(str(digest.get('type')))} · {escape(digest['id'])}[/dim]",
        escape(str(digest.get("summary") or "")),
    ]
    tags = digest.get("tags") or []
    if tags:
        lines.append(" ".join(f"[$accent]#{escape(str(t))}[/]" for t in tags))
    tokens = stats.get("body_tokens") or 0
    size = f"body {tokens} tokens"
    if tokens > budget.PICK:
        size += " [$warning](over the pick budget: reads section by section)[/]"
    lines.append(
        f"{size} · degree {stats.get('degree', 0)} · "
        f"heat {heat_dot(heat)} [{heat_colour(heat)}]{heat or 0:.2f}[/]"
        f" · updated {escape(str(digest.get('updated') or '?'))}"
    )
    if digest.get("coverage"):
        lines.append(f"[dim]{escape(str(digest['coverage']))}[/dim]")
    if digest.get("type") == "dataset":
        lines.append("[$accent]A dataset: press d for its query manual and SQL.[/]")
    for trail in digest.get("cross_trails") or []:
        lines.append(f"[dim]⤷ {escape(str(trail))}[/dim]")
    return "\n".join(lines)


def _heading(text: str) -> Option:
    return Option(f"[b $secondary]{text}[/]", disabled=True)


def link_options(digest: dict[str, Any], heat: dict[str, float]) -> list[Option]:
    """Options for the outline, children and edges of ``digest``.

    Option ids are ``sec:<n>:<header>`` (read a section) or ``go:<n>:<id>`` (hop).
    """
    options: list[Option] = []
    n = 0

    def go(target: str, prompt: str) -> None:
        nonlocal n
        n += 1
        options.append(Option(prompt, id=f"go:{n}:{target}"))

    outline = digest.get("outline") or []
    if outline:
        options.append(_heading("Outline · Enter reads a section"))
        for header in outline:
            n += 1
            options.append(Option(f"  § {escape(str(header))}", id=f"sec:{n}:{header}"))
    cut = set(digest.get("truncated_fields") or [])
    if "outline" in cut:
        options.append(
            Option("  [dim]… more sections: the reader (r) lists them all[/dim]", id="sec:0:")
        )
    for key, heading, end, line in _NEIGHBOURS:
        items = digest.get(key) or []
        if not items:
            continue
        options.append(_heading(heading))
        for item in items:
            go(item[end], line(item, heat))
        if key == "children" and key in cut:
            options.append(
                Option("  [dim]… more children: open the branch in the tree[/dim]", disabled=True)
            )
    if not options:
        options.append(_heading("No outline, children or edges."))
    return options


def _child(child: dict[str, Any], heat: dict[str, float]) -> str:
    summary = escape(str(child.get("summary") or ""))
    return f"  {_heated(child['id'], heat)}  [dim]{summary}[/dim]"


def _edge_out(edge: dict[str, Any], heat: dict[str, float]) -> str:
    summary = escape(str(edge.get("target_summary") or ""))
    return f"  → [i]{escape(edge['rel'])}[/i] {_heated(edge['target'], heat)}  [dim]{summary}[/dim]"


def _edge_in(edge: dict[str, Any], heat: dict[str, float]) -> str:
    rel = escape(edge["rel"])
    return f"  ← {_heated(edge['source'], heat)}  [dim](this node [i]{rel}[/i] it)[/dim]"


# The lists of neighbours, in order: the digest's key, the heading, the key of the id a
# line leads to, and the line. An edge in is the other node's link under the name it has
# from this side (a child's part-of is this branch's contains): "this node contains it",
# never the other way round.
_NEIGHBOURS: tuple[tuple[str, str, str, Callable[[dict[str, Any], dict[str, float]], str]], ...] = (
    ("children", "Children", "id", _child),
    ("edges_out", "Edges out", "target", _edge_out),
    ("edges_in", "Edges in · named from this node's side", "source", _edge_in),
)


def _heated(node_id: str, heat: dict[str, float]) -> str:
    """A node's id in its heat's colour, after its heat dot."""
    h = heat.get(node_id)
    return f"{heat_dot(h)} {heat_markup(node_id, h)}"


class DigestPanel(Vertical):
    """The current node's digest and its links."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.digest: dict[str, Any] | None = None

    def compose(self) -> ComposeResult:
        yield Static("Loading the forest…", id="digest-head")
        yield OptionList(id="digest-links")

    def show(self, digest: dict[str, Any], heat: dict[str, float]) -> None:
        """Draw ``digest`` with the heat of its neighbours."""
        self.digest = digest
        self.query_one("#digest-head", Static).update(head_markup(digest))
        links = self.query_one("#digest-links", OptionList)
        links.clear_options()
        links.add_options(link_options(digest, heat))
        first = next((i for i, o in enumerate(links.options) if not o.disabled), None)
        links.highlighted = first

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.digest is None or not event.option.id:
            return
        kind, _, rest = event.option.id.partition(":")
        target = rest.partition(":")[2]
        if kind == "sec":
            self.post_message(ReadSection(self.digest["id"], target or None))
        else:
            self.post_message(Navigate(target))
