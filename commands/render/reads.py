"""Layouts of the reads: tables, digest panels and markdown."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from .pieces import (
    DIM,
    NOTICE_KEYS,
    Fitted,
    Response,
    cell,
    columns_table,
    count,
    counted_table,
    extras,
    fit,
    footer,
    heat_bar,
    highlight,
    id_cell,
    markdown,
    pairs_grid,
    plain,
    ranking_line,
    stack,
    terms_pattern,
    trail_text,
)

# -- reads ---------------------------------------------------------------------------


def locate(console: Console, response: Response) -> set[str]:
    """Entry points as a ranked table with trails and heat."""
    results = response.get("results") or []
    headers = ("id", "type", "title", "summary", "score", "heat")
    table = counted_table("locate", results, "result", "#", *headers, wide="summary")
    for rank, item in enumerate(results, 1):
        kind = item.get("kind")
        ntype = item.get("type")
        type_cell = f"{ntype} ({kind})" if kind and kind != ntype else (ntype or kind)
        table.add_row(
            str(rank),
            id_cell(item),
            cell(type_cell),
            cell(item.get("title")),
            stack(
                cell(item.get("summary")),
                extras(item, ("id", "kind", "type", "title", "summary", "trail", "score", "heat")),
            ),
            cell(item.get("score")),
            heat_bar(item["heat"]) if "heat" in item else cell(None),
        )
    console.print(fit(console, table))
    if not results:
        console.print(Text("no entry points matched", style="yellow"))
    return {"results"} | ranking_line(console, response)


def look(console: Console, response: Response) -> set[str]:
    """One digest panel per node."""
    if "nodes" in response and "id" not in response:
        for node in response.get("nodes") or []:
            console.print(_digest(node))
            footer(console, node, set(node), "look")
        if not response.get("nodes"):
            console.print(Text("no digest returned", style="yellow"))
        for key, label in (("missing", "not found"), ("dropped", "dropped by the budget")):
            if response.get(key):
                console.print(
                    Text.assemble((f"{label}: ", "bold yellow"), ", ".join(map(str, response[key])))
                )
        return {"nodes", "missing", "dropped"}
    console.print(_digest(response))
    return set(response)


# The facts a digest panel lists under its title and summary, in this order.
DIGEST_FACTS = (
    "trail",
    "tags",
    "aliases",
    "confidence",
    "created",
    "updated",
    "source",
    "origin",
    "coverage",
)
# Every key the panel shows in a place of its own; any other key is listed as a fact.
DIGEST_SHOWN = (
    "id",
    "type",
    "title",
    "summary",
    *DIGEST_FACTS,
    "stats",
    "outline",
    "children",
    "cross_trails",
    "edges_out",
    "edges_in",
    "query_manual",
    "sample_rows",
    "notes",
    "truncated_fields",
)


def _digest(node: dict[str, Any]) -> Panel:
    """One node's look as a panel: facts, shape (outline or children), edges, data."""
    stats = node.get("stats") or {}
    parts: list[RenderableType] = []
    if node.get("title"):
        parts.append(Text(str(node["title"]), style="bold"))
    if node.get("summary"):
        parts.append(Text(str(node["summary"])))
    facts = [(key, node[key]) for key in DIGEST_FACTS if key in node]
    facts = [(k, Text(trail_text(v)) if k == "trail" else v) for k, v in facts]
    if "body_tokens" in stats:
        facts.append(("body", Text(f"{stats['body_tokens']} tokens")))
    if "degree" in stats:
        facts.append(("degree", stats["degree"]))
    if "heat" in stats:
        facts.append(("heat", heat_bar(stats["heat"])))
    facts += [
        (f"stats.{k}", v) for k, v in stats.items() if k not in ("body_tokens", "degree", "heat")
    ]
    facts += [(k, v) for k, v in node.items() if k not in DIGEST_SHOWN and k not in NOTICE_KEYS]
    if node.get("truncated_fields"):
        facts.append(
            ("cut to fit", Text(", ".join(map(str, node["truncated_fields"])), style="yellow"))
        )
    if facts:
        parts.append(pairs_grid(facts))
    parts += _digest_shape(node)
    parts += _digest_edges(node)
    parts += _digest_dataset(node)
    subtitle = " · ".join(str(node[k]) for k in ("type",) if node.get(k)) or None
    return Panel(
        Group(*parts),
        title=Text(str(node.get("id")), style="bold"),
        title_align="left",
        subtitle=subtitle,
        subtitle_align="right",
    )


def _cut_note(node: dict[str, Any], key: str) -> Text:
    """Said after a list the digest budget shortened, so a short list is not read as all."""
    if key in (node.get("truncated_fields") or []):
        return Text("  (cut to fit the budget: more exist)", style="yellow")
    return Text("")


def _digest_shape(node: dict[str, Any]) -> list[RenderableType]:
    parts: list[RenderableType] = []
    if node.get("outline"):
        parts.append(
            Text.assemble(
                ("outline: ", "bold"),
                " · ".join(map(str, node["outline"])),
                _cut_note(node, "outline"),
            )
        )
    elif "outline" in node:
        cut = _cut_note(node, "outline").plain.strip()
        parts.append(
            Text.assemble(("outline: ", "bold"), (cut, "yellow") if cut else ("(no sections)", DIM))
        )
    if "children" in node:
        children = node["children"] or []
        title = f"children ({len(children)})" + _cut_note(node, "children").plain
        table = columns_table("child", "summary", title=title)
        for child in children:
            table.add_row(
                Text(str(child.get("id")), style="bold"),
                stack(cell(child.get("summary")), extras(child, ("id", "summary"))),
            )
        parts.append(Fitted(table))
    if node.get("cross_trails"):
        parts.append(Text("cross trails:", style="bold"))
        parts += [Text(f"  {plain(t)}") for t in node["cross_trails"]]
    return parts


def _digest_edges(node: dict[str, Any]) -> list[RenderableType]:
    """Edges out read "→ rel target" (this node rel target). An edge in is the other
    node's link, shown under the name it has from this side (the dialect's inverse:
    a child's part-of is this branch's contains), so it reads the same way round:
    "← source · this node contains it", never as if the source held the rel."""
    parts: list[RenderableType] = []
    for key, end in (("edges_out", "target"), ("edges_in", "source")):
        if key not in node:
            continue
        edges = node[key] or []
        heading = f"{key.replace('_', ' ')} ({len(edges)})"
        if key == "edges_in" and edges:
            heading += ", named from this node's side"
        parts.append(Text.assemble((heading, "bold"), _cut_note(node, key)))
        for edge in edges:
            if key == "edges_out":
                line = Text.assemble(
                    "  → ", (str(edge.get("rel")), "cyan"), " ", (str(edge.get(end)), "bold")
                )
            else:
                line = Text.assemble(
                    "  ← ",
                    (str(edge.get(end)), "bold"),
                    "  (this node ",
                    (str(edge.get("rel")), "cyan"),
                    " it)",
                )
            if edge.get("target_summary"):
                line.append(f"  {edge['target_summary']}", style=DIM)
            extra = extras(edge, ("rel", end, "target_summary"))
            if extra:
                line.append("  ").append(extra)
            parts.append(line)
    return parts


def _digest_dataset(node: dict[str, Any]) -> list[RenderableType]:
    parts: list[RenderableType] = []
    manual = node.get("query_manual")
    if isinstance(manual, dict):
        tables = manual.get("tables") or {}
        grid = pairs_grid(
            (f"table {name}", ", ".join(map(str, cols)) if isinstance(cols, list) else plain(cols))
            for name, cols in tables.items()
        )
        parts += [Text("query manual", style="bold"), grid]
        for example in manual.get("example_queries") or []:
            parts.append(Text(f"  {example}", style="green"))
        for key, value in manual.items():
            if key not in ("tables", "example_queries"):
                parts.append(Text.assemble((f"  {key}: ", "bold yellow"), plain(value)))
    elif manual is not None:
        parts.append(Text.assemble(("query manual: ", "bold"), plain(manual)))
    sample = node.get("sample_rows")
    if isinstance(sample, dict) and "columns" in sample:
        rows = _rows_table(sample.get("columns") or [], sample.get("rows") or [], "sample rows")
        parts.append(Fitted(rows))
    elif sample is not None:
        parts.append(Text.assemble(("sample rows: ", "bold"), plain(sample)))
    if node.get("notes"):
        parts += [Text("notes", style="bold"), markdown(str(node["notes"]))]
    return parts


def move(console: Console, response: Response) -> set[str]:
    """The neighbours along an edge as a table."""
    neighbours = response.get("neighbors") or response.get("neighbours") or []
    headers = ("id", "rel", "type", "summary", "heat")
    table = counted_table("move", neighbours, "neighbour", *headers, wide="summary")
    for item in neighbours:
        direction = item.get("direction")
        arrow = {"out": "→ ", "in": "← "}.get(str(direction), "")
        table.add_row(
            stack(
                Text(str(item.get("id")), style="bold"),
                cell(item.get("title")) if item.get("title") else None,
            ),
            Text(arrow + str(item.get("rel")), style="cyan"),
            cell(item.get("type")),
            stack(
                cell(item.get("summary")),
                extras(item, ("id", "rel", "direction", "type", "title", "summary", "heat")),
            ),
            heat_bar(item["heat"]) if "heat" in item else cell(None),
        )
    console.print(fit(console, table))
    if not neighbours:
        console.print(Text("no neighbours along that edge", style="yellow"))
    return {"neighbors", "neighbours"}


def pick(console: Console, response: Response) -> set[str]:
    """Each picked body as markdown, with what was missing or dropped."""
    if "nodes" in response and "id" not in response:
        for node in response.get("nodes") or []:
            _pick_one(console, node)
            footer(console, node, PICK_SHOWN, "pick")
        for key, label in (("missing", "not found"), ("dropped", "dropped by the budget")):
            if response.get(key):
                console.print(
                    Text.assemble((f"{label}: ", "bold yellow"), ", ".join(map(str, response[key])))
                )
        return {"nodes", "missing", "dropped"}
    _pick_one(console, response)
    return set(PICK_SHOWN)


PICK_SHOWN = (
    "id",
    "title",
    "section",
    "body",
    "body_tokens",
    "sections",
    "missing",
    "outline",
    "total",
    "returned",
    "cut",
)


def _pick_one(console: Console, node: Response) -> None:
    """A header line, then the markdown: a body, a section, sections, a page or a map."""
    header = Text.assemble((str(node.get("id")), "bold"))
    if node.get("title"):
        header.append(f"  {node['title']}")
    if node.get("section"):
        header.append("  § ", style=DIM).append(str(node["section"]), style="bold cyan")
    if "body_tokens" in node:
        header.append(f"  ({node['body_tokens']} tokens)", style=DIM)
    console.print(Rule(header, align="left"))
    if "outline" in node and "body" not in node:
        console.print(
            Text(
                "The body is over the pick budget; here is its outline to name "
                'a section (or page it with after=""):',
                style="yellow",
            )
        )
        for n, head in enumerate(node.get("outline") or [], 1):
            console.print(Text(f"  {n:>2}. {head}"))
    if node.get("body"):
        console.print(markdown(str(node["body"])))
    elif "body" in node and "sections" not in node:
        console.print(Text("(empty)", style=DIM))
    for part in node.get("sections") or []:
        title = Text.assemble(
            ("§ ", DIM), (str(part.get("header") or part.get("section")), "bold cyan")
        )
        if part.get("body_tokens") is not None:
            title.append(f"  ({part['body_tokens']} tokens)", style=DIM)
        console.print(Rule(title, align="left", style=DIM))
        console.print(markdown(str(part.get("body") or "")))
        extra = extras(part, ("section", "header", "body", "body_tokens"))
        if extra:
            console.print(extra)
    if node.get("missing"):
        console.print(
            Text.assemble(
                ("sections not found: ", "bold yellow"), ", ".join(map(str, node["missing"]))
            )
        )
    if "total" in node:
        page = f"page: {node.get('returned', '?')} of {count(node['total'], 'block')}"
        if node.get("cut"):
            page += "; a block too big for one page was cut, the next page continues it"
        console.print(Text(page, style=DIM))


def scan(console: Console, response: Response) -> set[str]:
    """The matching nodes as a table of the fields asked for."""
    nodes = response.get("nodes") or []
    columns: list[str] = []
    for node in nodes:
        columns += [k for k in node if k not in columns]
    title = f"scan: {response.get('returned', len(nodes))} of {response.get('total', '?')}"
    table = columns_table(*columns, title=title)
    for node in nodes:
        table.add_row(*(_scan_cell(key, node) for key in columns))
    console.print(fit(console, table))
    if not nodes:
        console.print(Text("no nodes matched", style="yellow"))
    return {"nodes", "total", "returned"}


def _scan_cell(key: str, node: dict[str, Any]) -> Text:
    if key not in node:
        return Text("")
    if key == "heat":
        return heat_bar(node[key])
    if key == "id":
        return Text(str(node[key]), style="bold")
    return cell(node[key])


def sniff(console: Console, response: Response) -> set[str]:
    """Matching body lines per node, the terms highlighted."""
    results = response.get("results") or []
    pattern = terms_pattern(response.get("terms"))
    headers = ("node", "section", "line", "snippet")
    table = counted_table("sniff", results, "node", "#", *headers, wide="snippet")
    for rank, item in enumerate(results, 1):
        matches = item.get("matches") or []
        node = stack(
            Text(str(item.get("id")), style="bold"),
            cell(item.get("title")),
            Text(plain(item.get("type")) + f" · score {item.get('score')}", style=DIM),
            heat_bar(item["heat"]) if "heat" in item else None,
            extras(item, ("id", "title", "type", "score", "heat", "matches", "truncated_matches")),
        )
        if not matches:
            table.add_row(
                str(rank), node, "", "", Text("no lines shown", style=DIM), end_section=True
            )
        for i, match in enumerate(matches):
            last = i == len(matches) - 1
            table.add_row(
                str(rank) if i == 0 else "",
                node if i == 0 else "",
                cell(match.get("section")),
                cell(match.get("line")),
                stack(
                    highlight(str(match.get("snippet", "")), pattern),
                    extras(match, ("section", "line", "snippet")),
                ),
                end_section=last and not item.get("truncated_matches"),
            )
        if item.get("truncated_matches"):
            more = item.get("match_count")
            note = (
                f"… {count(more - len(matches), 'more matching line')} in this node not shown"
                if isinstance(more, int)
                else "… more matching lines in this node not shown"
            )
            table.add_row("", "", "", "", Text(note, style="yellow"), end_section=True)
    console.print(fit(console, table))
    if "scanned_nodes" in response:
        console.print(Text(f"scanned {count(response['scanned_nodes'], 'node')}", style=DIM))
    if not results:
        console.print(Text("no body line matched", style="yellow"))
    return {"results", "scanned_nodes"}


def query(console: Console, response: Response) -> set[str]:
    """The rows as a table, with the row count and time."""
    columns = response.get("columns") or []
    rows = response.get("rows") or []
    console.print(fit(console, _rows_table(columns, rows)))
    facts = [count(response.get("row_count", len(rows)), "row")]
    if "elapsed_ms" in response:
        facts.append(f"{response['elapsed_ms']} ms")
    console.print(Text(" · ".join(facts), style=DIM))
    if response.get("limited"):
        console.print(
            Text(
                "limited: the row limit was reached; more rows may match "
                "(aggregate, filter, or page with LIMIT/OFFSET)",
                style="yellow",
            )
        )
    return {"columns", "rows", "row_count", "elapsed_ms", "limited"}


def _rows_table(columns: list[Any], rows: list[Any], title: str | None = None) -> Table:
    table = Table(title=title, title_justify="left", header_style="bold")
    for name in columns:
        table.add_column(str(name), overflow="fold")
    for row in rows:
        cells = row if isinstance(row, list) else [row]
        table.add_row(*(Text("NULL", style=DIM) if v is None else cell(v) for v in cells))
    return table
