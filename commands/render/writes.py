"""Layouts of the writes, of harvest's evidence, of errors and of anything else."""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.rule import Rule
from rich.text import Text

from .pieces import (
    DIM,
    NOTICE_KEYS,
    Response,
    _cell,
    _extras,
    _lines,
    _pairs,
    _plain,
    _short_sha,
    _table,
    _trail,
    ranking_line,
)
from .reads import _highlight, _markdown, _terms_pattern

# -- writes --------------------------------------------------------------------------


WRITE_VERBS = {"plant": "planted", "graft": "grafted", "tend": "tended", "prune": "pruned",
               "transplant": "transplanted"}


def _write(console: Console, call: str, response: Response) -> set[str]:
    """A short success panel: what was written, the commit, and what it touched."""
    facts: list[tuple[str, Any]] = []
    for key, value in response.items():
        if key in NOTICE_KEYS:
            continue
        if key == "commit":
            facts.append(("commit", _short_sha(value)))
        elif key == "trail":
            facts.append(("trail", Text(_trail(value))))
        elif key == "fortified":
            facts.append(("fortified", _fortified(value)))
        elif key == "created" and isinstance(value, bool):
            facts.append(("created", Text("yes") if value else
                          Text("no: it already existed, nothing was written", style="yellow")))
        else:
            facts.append((key, value))
    wrote = bool(response.get("commit"))
    if response.get("dry_run"):
        heading = f"{call}: dry run, valid, nothing written"
    elif wrote:
        what = response.get("id") or f"{response.get('count', '?')} node(s)"
        if call == "transplant" and response.get("new_id"):
            what = f"{what} → {response['new_id']}"
        heading = f"{WRITE_VERBS.get(call, call)} {_plain(what)}"
    else:
        heading = f"{call}: no commit"
    style = "green" if wrote else "yellow"
    console.print(Panel(_pairs(facts), title=Text(heading, style=f"bold {style}"),
                        title_align="left", border_style=style, expand=False))
    return set(response) - set(NOTICE_KEYS)


def _fortified(links: Any) -> Text:
    if not links:
        return Text("none", style=DIM)
    if not isinstance(links, list):
        return Text(_plain(links))
    lines = [f"{link.get('rel')} → {link.get('target')}" if isinstance(link, dict)
             else _plain(link) for link in links]
    return Text("\n".join(lines) + "\n(existing links: heat rose, no new edge)")


def _init(console: Console, response: Response) -> set[str]:
    """A new forest: where it is, what it holds, its first commit, and what to do next."""
    where = str(response.get("forest", "?"))
    facts: list[tuple[str, Any]] = [("folder", Text(where)),
                                    ("title", response.get("title"))]
    if response.get("nodes") == 1:
        facts.append(("holds", Text("_index (the master branch) and _meta/schema (the "
                                    "dialect: node types and rels)")))
    elif "nodes" in response:
        facts.append(("nodes", response["nodes"]))
    if response.get("commit"):
        facts.append(("commit", _short_sha(response["commit"])))
    facts += [(k, v) for k, v in response.items()
              if k not in ("forest", "title", "nodes", "commit") and k not in NOTICE_KEYS]
    quoted = where if " " not in where else f'"{where}"'
    steps = Text.assemble(
        ("Next:\n", "bold"),
        (f"  vine browse {quoted}", "cyan"), "   look around; p plants a note, e edits\n",
        (f"  vine ingest ~/notes --into notes -f {quoted}", "cyan"),
        "   files you already have become nodes\n",
        (f"  vine plant @node.json -f {quoted}", "cyan"), "   a node you write as JSON")
    console.print(Panel(Group(_pairs(facts), Text(""), steps),
                        title=Text(f"created forest {response.get('title', '')!r}",
                                   style="bold green"),
                        title_align="left", border_style="green", expand=False))
    return set(response) - set(NOTICE_KEYS)


# -- composites and the rest ---------------------------------------------------------


def _harvest(console: Console, response: Response) -> set[str]:
    if response.get("query") is not None:
        console.print(Text.assemble(("query: ", "bold"), _plain(response["query"])))
    if response.get("terms"):
        console.print(Text.assemble(("terms: ", "bold"), _cell(response["terms"])))
    results = response.get("results") or []
    table = _table("#", "id", "title", "summary", "score", "found by",
                   title=f"harvest: {len(results)} result(s)", wide="summary")
    for rank, item in enumerate(results, 1):
        table.add_row(str(rank),
                      _lines(Text(str(item.get("id")), style="bold"),
                             Text(_trail(item["trail"]), style=DIM)
                             if item.get("trail") else None),
                      _cell(item.get("title")), _cell(item.get("summary")),
                      _cell(item.get("score")), _found_by(item))
    console.print(table)
    pattern = _terms_pattern(response.get("terms"))
    for item in results:
        console.print(_evidence(item, pattern))
    return {"query", "terms", "results"} | ranking_line(console, response)


HARVEST_SHOWN = ("id", "title", "summary", "score", "found_by", "via", "trail", "matches",
                 "content", "notes")


def _found_by(item: dict[str, Any]) -> Text:
    """Which rankers found a result; for one a link brought, the hit and the rel."""
    text = _cell(item.get("found_by"))
    via = item.get("via")
    if isinstance(via, dict):
        text.append(f"\nvia {via.get('from')} ({via.get('rel')})", style=DIM)
    return text


def _evidence(item: dict[str, Any], pattern: re.Pattern[str] | None) -> Panel:
    """One harvested node's matches and content."""
    parts: list[RenderableType] = []
    for match in item.get("matches") or []:
        where = f"{match.get('section') or '(top)'}:{match.get('line', '?')}"
        parts.append(Text.assemble((f"{where}  ", "cyan"),
                                   _highlight(str(match.get("snippet", "")), pattern)))
    content = item.get("content")
    blocks = content if isinstance(content, list) else [content] if content else []
    for block in blocks:
        if isinstance(block, dict):
            label = block.get("section") or "body"
            parts.append(Rule(Text(f"{label} ({block.get('body_tokens', '?')} tokens)"),
                              align="left", style=DIM))
            if block.get("body"):
                parts.append(_markdown(str(block["body"])))
            extra = _extras(block, ("section", "body", "body_tokens"))
            if extra:
                parts.append(extra)
        else:
            parts.append(_markdown(_plain(block)))
    if item.get("notes"):
        parts += [Text("notes", style="bold"), _markdown(_plain(item["notes"]))]
    extra = _extras(item, HARVEST_SHOWN)
    if extra:
        parts.append(extra)
    return Panel(Group(*parts) if parts else Text("no content", style=DIM),
                 title=Text(str(item.get("id")), style="bold"), title_align="left")


def _error(console: Console, response: Response) -> set[str]:
    error = response.get("error") or {}
    if not isinstance(error, dict):
        error = {"message": error}
    body = _pairs((k, v) for k, v in error.items() if k != "hint")
    console.print(Panel(body, title=Text(str(error.get("code", "error")), style="bold red"),
                        title_align="left", border_style="red", expand=False))
    if error.get("hint"):
        console.print(Text.assemble(("hint: ", "bold cyan"), _plain(error["hint"])))
    return {"error"}


def _generic(console: Console, call: str, response: Response) -> set[str]:
    from rich.json import JSON

    console.print(Text(call, style="bold"))
    console.print(JSON.from_data(response, ensure_ascii=False, default=str))
    return set(response)
