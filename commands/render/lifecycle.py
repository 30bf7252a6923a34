"""Layouts of history (a table), calendar (a bar chart per period) and coverage (the
regions, then the totals)."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from .pieces import (
    DIM,
    Response,
    cell,
    columns_table,
    count,
    counted_table,
    fit,
    pairs_grid,
    plain,
    short_sha,
    stack,
)

BAR_WIDTH = 40


def history(console: Console, response: Response) -> set[str]:
    """A node's commits as a table, newest first."""
    entries = response.get("entries") or []
    table = columns_table(
        "when",
        "action",
        "by",
        "message",
        "commit",
        title=f"history of {plain(response.get('id'))}: {count(len(entries), 'commit')}",
        wide="message",
    )
    for entry in entries:
        at = str(entry.get("at") or "")
        when = at.replace("T", " ")[:19] if at else None
        table.add_row(
            cell(when),
            Text(str(entry.get("action")), style="bold"),
            cell(entry.get("by")),
            cell(entry.get("message")),
            short_sha(entry.get("commit")),
        )
    console.print(fit(console, table))
    if not entries:
        console.print(Text("no commit has touched this node yet", style="yellow"))
    return {"id", "entries"}


def calendar(console: Console, response: Response) -> set[str]:
    """Nodes per period as a bar chart, with the dated range and the undated count."""
    buckets = response.get("buckets") or []
    span = response.get("range") or {}
    most = max((b.get("nodes") or 0 for b in buckets), default=0)
    field = response.get("date_field", "created")
    table = columns_table(
        "period",
        "nodes",
        "",
        "since / until",
        title=f"calendar by {response.get('granularity')} of {field}: "
        + count(len(buckets), "period"),
    )
    windows = [
        str(b.get("since"))
        if b.get("since") == b.get("until")
        else f"{b.get('since')} .. {b.get('until')}"
        for b in buckets
    ]
    # The bars take what the other columns leave (borders and padding: 13 cells), so a
    # narrow terminal gets shorter bars rather than bars folded over several lines.
    periods = max((len(str(b.get("period"))) for b in buckets), default=6)
    others = max(periods, 6) + 5 + max(map(len, windows), default=0) + 13
    bar_width = max(6, min(BAR_WIDTH, console.width - others))
    for bucket, window in zip(buckets, windows, strict=True):
        n = bucket.get("nodes") or 0
        filled = max(1, round(n / most * bar_width)) if most and n else 0
        bar = Text("█" * filled, style="cyan")
        table.add_row(
            Text(str(bucket.get("period")), style="bold"), str(n), bar, Text(window, style=DIM)
        )
    console.print(fit(console, table))
    facts = [
        (
            "dated",
            f"{count(span.get('nodes', 0), 'node')}, {span.get('first') or '—'} to "
            f"{span.get('last') or '—'}",
        ),
        ("undated", response.get("undated", 0)),
    ]
    if response.get("window"):
        w = response["window"]
        facts.append(("window", f"{w.get('since') or '…'} to {w.get('until') or '…'}"))
    console.print(pairs_grid(facts))
    return {"buckets", "range", "date_field", "granularity", "undated", "window"}


def coverage(console: Console, response: Response) -> set[str]:
    """The regions as a table (nodes, branches, dated span, origin), then the totals."""
    roots = response.get("roots") or []
    field = response.get("date_field", "created")
    headers = ("region", "nodes", "branches", f"{field} from", "to", "origin")
    table = counted_table("coverage", roots, "region", *headers, wide="origin")
    for root in roots:
        origin = root.get("origin")
        without = root.get("without_origin") or 0
        table.add_row(
            stack(
                Text(str(root.get("id")), style="bold"),
                Text(str(root.get("title")), style=DIM) if root.get("title") else None,
            ),
            str(root.get("nodes")),
            str(root.get("branches")),
            cell(root.get("first")),
            cell(root.get("last")),
            stack(
                cell(origin),
                Text(f"{without} without one", style=DIM) if without and origin else None,
            ),
        )
    console.print(fit(console, table))
    types = response.get("types") or {}
    sources = response.get("sources") or {}
    console.print(
        pairs_grid(
            [
                ("total", count(response.get("total"), "node")),
                ("types", ", ".join(f"{k} {v}" for k, v in types.items()) or "—"),
                ("sources", ", ".join(f"{k} {v}" for k, v in sources.items()) or "—"),
                ("undated", response.get("undated")),
                ("system", f"{response.get('system')} (_meta)"),
            ]
        )
    )
    return {"roots", "total", "types", "sources", "undated", "system", "date_field"}
