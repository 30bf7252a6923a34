"""The layout of harvest: its ranked results, then each one's evidence."""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.rule import Rule
from rich.text import Text

from .pieces import (
    DIM,
    Response,
    cell,
    counted_table,
    extras,
    fit,
    highlight,
    id_cell,
    markdown,
    plain,
    ranking_line,
    terms_pattern,
)


def harvest(console: Console, response: Response) -> set[str]:
    """The ranked results as a table, then one panel of evidence per result."""
    if response.get("query") is not None:
        console.print(Text.assemble(("query: ", "bold"), plain(response["query"])))
    if response.get("terms"):
        console.print(Text.assemble(("terms: ", "bold"), cell(response["terms"])))
    results = response.get("results") or []
    headers = ("id", "title", "summary", "score", "found by")
    table = counted_table("harvest", results, "result", "#", *headers, wide="summary")
    for rank, item in enumerate(results, 1):
        table.add_row(
            str(rank),
            id_cell(item),
            cell(item.get("title")),
            cell(item.get("summary")),
            cell(item.get("score")),
            _found_by(item),
        )
    console.print(fit(console, table))
    pattern = terms_pattern(response.get("terms"))
    for item in results:
        console.print(_evidence(item, pattern))
    return {"query", "terms", "results"} | ranking_line(console, response)


HARVEST_SHOWN = (
    "id",
    "title",
    "summary",
    "score",
    "found_by",
    "via",
    "trail",
    "matches",
    "content",
    "notes",
)


def _found_by(item: dict[str, Any]) -> Text:
    """Which rankers found a result; for one a link brought, the hit and the rel."""
    text = cell(item.get("found_by"))
    via = item.get("via")
    if isinstance(via, dict):
        text.append(f"\nvia {via.get('from')} ({via.get('rel')})", style=DIM)
    return text


def _evidence(item: dict[str, Any], pattern: re.Pattern[str] | None) -> Panel:
    """One harvested node's matches and content."""
    parts: list[RenderableType] = []
    for match in item.get("matches") or []:
        where = f"{match.get('section') or '(top)'}:{match.get('line', '?')}"
        parts.append(
            Text.assemble((f"{where}  ", "cyan"), highlight(str(match.get("snippet", "")), pattern))
        )
    content = item.get("content")
    blocks = content if isinstance(content, list) else [content] if content else []
    for block in blocks:
        if isinstance(block, dict):
            label = block.get("section") or "body"
            parts.append(
                Rule(
                    Text(f"{label} ({block.get('body_tokens', '?')} tokens)"),
                    align="left",
                    style=DIM,
                )
            )
            if block.get("body"):
                parts.append(markdown(str(block["body"])))
            extra = extras(block, ("section", "body", "body_tokens"))
            if extra:
                parts.append(extra)
        else:
            parts.append(markdown(plain(block)))
    if item.get("notes"):
        parts += [Text("notes", style="bold"), markdown(plain(item["notes"]))]
    extra = extras(item, HARVEST_SHOWN)
    if extra:
        parts.append(extra)
    return Panel(
        Group(*parts) if parts else Text("no content", style=DIM),
        title=Text(str(item.get("id")), style="bold"),
        title_align="left",
    )
