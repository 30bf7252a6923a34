"""``locate``: ranked entry points from curated metadata (never bodies)."""

from __future__ import annotations

import json
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
    pool = max(5 * k, 25)
    top = _ranked(forest, expr, pool, "", []) if expr else []
    best = top[0][1] if top else 0.0
    ranked = top if not filters else _ranked(forest, expr, pool, filters, args)
    rows = _rows(forest, [rowid for rowid, _ in ranked])
    heat = forest.heat.many(r["id"] for r in rows.values())
    scored = []
    for rowid, rank in ranked:
        r = rows.get(rowid)
        if r is None:
            continue
        strength = round(rank / best, 4) if best < 0 else 1.0
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
    forest.found(r["id"] for r in out["results"])
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


def _ranked(forest: Forest, expr: str, pool: int, filters: str,
            args: list[Any]) -> list[tuple[int, float]]:
    """``(rowid, rank)`` of the best matches, best first (rank is bm25: lower is better)."""
    if filters:
        sql = ("SELECT f.rowid, f.rank FROM nodes_fts f JOIN nodes n ON n.rowid = f.rowid "
               f"WHERE nodes_fts MATCH ?{filters} ORDER BY f.rank LIMIT ?")
    else:
        sql = "SELECT rowid, rank FROM nodes_fts WHERE nodes_fts MATCH ? ORDER BY rank LIMIT ?"
    try:
        return forest.catalog.conn.execute(sql, (expr, *args, pool)).fetchall()
    except sqlite3.OperationalError:
        return []


def _rows(forest: Forest, rowids: list[int]) -> dict[int, sqlite3.Row]:
    if not rowids:
        return {}
    rows = forest.catalog.rows(
        "SELECT rowid AS ord, * FROM nodes WHERE rowid IN (SELECT value FROM json_each(?))",
        (json.dumps(rowids),))
    return {r["ord"]: r for r in rows}


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
