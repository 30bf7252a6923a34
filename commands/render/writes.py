"""Layouts of the writes and of a new forest."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from .pieces import DIM, NOTICE_KEYS, Response, count, pairs_grid, plain, short_sha, trail_text

# -- writes --------------------------------------------------------------------------


WRITE_VERBS = {
    "plant": "planted",
    "graft": "grafted",
    "tend": "tended",
    "prune": "pruned",
    "transplant": "transplanted",
}


def write(console: Console, call: str, response: Response) -> set[str]:
    """A short success panel: what was written, the commit, and what it touched."""
    facts: list[tuple[str, Any]] = []
    for key, value in response.items():
        if key in NOTICE_KEYS:
            continue
        if key == "commit":
            facts.append(("commit", short_sha(value)))
        elif key == "trail":
            facts.append(("trail", Text(trail_text(value))))
        elif key == "fortified":
            facts.append(("fortified", _fortified(value)))
        elif key == "created" and isinstance(value, bool):
            facts.append(
                (
                    "created",
                    Text("yes")
                    if value
                    else Text("no: it already existed, nothing was written", style="yellow"),
                )
            )
        else:
            facts.append((key, value))
    wrote = bool(response.get("commit"))
    if response.get("dry_run"):
        heading = f"{call}: dry run, valid, nothing written"
    elif wrote:
        what = response.get("id") or count(response.get("count"), "node")
        if call == "transplant" and response.get("new_id"):
            what = f"{what} → {response['new_id']}"
        heading = f"{WRITE_VERBS.get(call, call)} {plain(what)}"
    else:
        heading = f"{call}: no commit"
    style = "green" if wrote else "yellow"
    console.print(
        Panel(
            pairs_grid(facts),
            title=Text(heading, style=f"bold {style}"),
            title_align="left",
            border_style=style,
            expand=False,
        )
    )
    return set(response) - set(NOTICE_KEYS)


def _fortified(links: Any) -> Text:
    if not links:
        return Text("none", style=DIM)
    if not isinstance(links, list):
        return Text(plain(links))
    lines = [
        f"{link.get('rel')} → {link.get('target')}" if isinstance(link, dict) else plain(link)
        for link in links
    ]
    return Text("\n".join(lines) + "\n(existing links: heat rose, no new edge)")


def init(console: Console, response: Response) -> set[str]:
    """A new forest: where it is, what it holds, its first commit, and what to do next."""
    where = str(response.get("forest", "?"))
    facts: list[tuple[str, Any]] = [("folder", Text(where)), ("title", response.get("title"))]
    if response.get("nodes") == 1:
        facts.append(
            (
                "holds",
                Text(
                    "_index (the master branch) and _meta/schema (the dialect: node types and rels)"
                ),
            )
        )
    elif "nodes" in response:
        facts.append(("nodes", response["nodes"]))
    if response.get("commit"):
        facts.append(("commit", short_sha(response["commit"])))
    facts += [
        (k, v)
        for k, v in response.items()
        if k not in ("forest", "title", "nodes", "commit") and k not in NOTICE_KEYS
    ]
    quoted = where if " " not in where else f'"{where}"'
    steps = Text.assemble(
        ("Next:\n", "bold"),
        (f"  vine browse {quoted}", "cyan"),
        "   look around; p plants a note, e edits\n",
        (f"  vine ingest ~/notes --into notes -f {quoted}", "cyan"),
        "   files you already have become nodes\n",
        (f"  vine plant @node.json -f {quoted}", "cyan"),
        "   a node as JSON: id, type, parent (_index at first), title and summary",
    )
    console.print(
        Panel(
            Group(pairs_grid(facts), Text(""), steps),
            title=Text(f"created forest {response.get('title', '')!r}", style="bold green"),
            title_align="left",
            border_style="green",
            expand=False,
        )
    )
    return set(response) - set(NOTICE_KEYS)
