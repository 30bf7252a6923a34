"""``locate``: ranked entry points from curated metadata (never bodies)."""

from __future__ import annotations

import sqlite3
from typing import Any

from .. import budget
from ..errors import SchemaError
from ..forest import Forest, coverage_text, row_list, wire_kind
from ..heat import LIST_DEPOSIT
from ..text import fts_query
from ..windows import Window

SCOPES = {"all": None, "branches": "branch", "notes": "banana", "bananas": "banana"}
INCLUDES = ("outline",)
# The pool never needs more: the budget holds far fewer results.
MAX_K = 1000
# bm25 weights: id (unindexed), title, aliases, tags, summary.
_RANK = "bm25(nodes_fts, 0, 4, 3, 2, 1)"


def locate(forest: Forest, query: str, k: int, scope: str, type_filter: str | None,
           include: list[str] | None, win: Window) -> dict[str, Any]:
    """Search titles, aliases, tags and summaries; rank by strength and heat."""
    if scope not in SCOPES:
        raise SchemaError(f"locate: scope must be one of all, branches, notes; got {scope!r}")
    for item in include or []:
        if item not in INCLUDES:
            raise SchemaError(f"locate: include accepts only {list(INCLUDES)}, got {item!r}")
    k = min(max(1, k), MAX_K)
    kind = SCOPES[scope]
    expr = fts_query(query)
    filters, args = _filters(kind, type_filter, win)
    best = _best(forest, expr) if expr else 0.0
    rows = _pool(forest, expr, k, filters, args) if expr else []
    heat = forest.heat.many(r["id"] for r in rows)
    scored = []
    for r in rows:
        strength = round(r["rank"] / best, 4) if best < 0 else 1.0
        scored.append((forest.score(strength, heat[r["id"]]), r))
    scored.sort(key=lambda pair: (-pair[0], pair[1]["ord"]))
    results = [_item(forest, r, score, heat[r["id"]], include) for score, r in scored[:k]]
    out: dict[str, Any] = {"results": results, "truncated": len(scored) > k}
    if win.active:
        out["window"] = win.echo()
    if not scored:
        out["searched"] = forest.catalog.conn.execute(
            "SELECT count(*) FROM nodes n WHERE 1=1" + filters, args).fetchone()[0]
        out["hint"] = ("locate reads titles, aliases, tags and summaries only; to find an "
                       "exact string inside bodies use sniff(terms).")
    else:
        matched = len(scored)
        budget.shrink_with_hint(
            out, "results", budget.LOCATE,
            lambda kept: f"{kept} of the top {min(k, matched)} results fit the 800-token "
                         "budget; the rest exist. Ask for a smaller k, drop include, or "
                         "narrow the query.")
    forest.heat.deposit((r["id"] for r in out["results"]), LIST_DEPOSIT)
    return out


def _filters(kind: str | None, type_filter: str | None,
             win: Window) -> tuple[str, list[Any]]:
    sql, args = "", []
    if kind:
        sql += " AND n.kind = ?"
        args.append(kind)
    if type_filter:
        sql += " AND n.type = ?"
        args.append(type_filter)
    wsql, wargs = win.sql("n.")
    return sql + wsql, args + wargs


def _best(forest: Forest, expr: str) -> float:
    """The best rank over every match, before scope, type and window filters."""
    try:
        row = forest.catalog.conn.execute(
            f"SELECT {_RANK} AS rank FROM nodes_fts WHERE nodes_fts MATCH ? "
            "ORDER BY rank LIMIT 1", (expr,)).fetchone()
    except sqlite3.OperationalError:
        return 0.0
    return row[0] if row else 0.0


def _pool(forest: Forest, expr: str, k: int, filters: str,
          args: list[Any]) -> list[sqlite3.Row]:
    sql = (f"SELECT n.rowid AS ord, n.*, {_RANK} AS rank FROM nodes_fts "
           "JOIN nodes n ON n.rowid = nodes_fts.rowid "
           f"WHERE nodes_fts MATCH ?{filters} ORDER BY rank LIMIT ?")
    try:
        return forest.catalog.rows(sql, (expr, *args, max(5 * k, 25)))
    except sqlite3.OperationalError:
        return []


def _item(forest: Forest, r: sqlite3.Row, score: float, heat: float,
          include: list[str] | None) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": r["id"], "kind": wire_kind(r["kind"]), "type": r["type"], "title": r["title"],
        "summary": r["summary"], "trail": row_list(r, "trail"), "score": score, "heat": heat,
        "body_tokens": r["body_tokens"],
    }
    if r["kind"] == "branch" and r["coverage"]:
        item["coverage"] = coverage_text(r["coverage"])
    if include and "outline" in include:
        item["outline"] = row_list(r, "outline")
    return item
