"""``query``: read-only SQL over a dataset payload, columnar, within 2000 tokens."""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from .. import budget, datasets, hints, sqlguard
from ..errors import QueryForbidden, QueryInvalid, Timeout, refused_write
from ..forest import Forest
from ..text import counted


def query(forest: Forest, id: str, sql: str) -> dict[str, Any]:
    """Run one guarded SELECT on a dataset's SQLite payload."""
    row = forest.resolve(id)
    node_id = row["id"]
    if row["type"] != "dataset" or row["payload_type"] not in (None, "sqlite"):
        raise QueryForbidden(
            f"{node_id} is not a SQLite dataset (type {row['type']})",
            hint=f"query reads dataset payloads; use {hints.call('pick', 'id')} for text.",
        )
    verdict = sqlguard.check_read(sql, budget.QUERY_ROW_LIMIT)
    path = forest.payload_path(row)
    conn, started = forest.payloads.get(path, node_id)
    out = run_select(conn, started, verdict)
    forest.read_deposit([node_id])
    return out


def sql_error(conn: sqlite3.Connection, exc: sqlite3.Error, started: float) -> Exception:
    """Map a SQLite error to the envelope's code, with real names in the hint."""
    message = str(exc)
    if "interrupted" in message or time.perf_counter() - started > budget.QUERY_SECONDS:
        return Timeout(
            f"statement ran past {budget.QUERY_SECONDS:g} s and was stopped",
            hint="Narrow it with WHERE, aggregate, or add a LIMIT.",
        )
    if "not authorized" in message or "prohibited" in message:
        return QueryForbidden(
            "statement was refused by the read-only guard",
            hint="Only reads of the dataset's tables are allowed.",
        )
    refused = refused_write(exc)
    if refused is not None:
        return refused
    conn.set_authorizer(None)
    try:
        names = datasets.tables(conn)
    except sqlite3.Error:
        names = {}
    finally:
        conn.set_authorizer(sqlguard.authorizer(allow_writes=False))
    listing = "; ".join(f"{t}({', '.join(cols[:25])})" for t, cols in list(names.items())[:4])
    if not names:
        hint = None
    elif "no such table" in message:
        hint = "Tables: " + ", ".join(names) + "."
    else:
        hint = "Columns: " + listing + "."
    return QueryInvalid(f"SQL error: {message}", hint=hint)


def run_select(
    conn: sqlite3.Connection, started: list[float], verdict: sqlguard.Verdict
) -> dict[str, Any]:
    """Execute a guarded read and fit the rows to the budget."""
    started[0] = time.perf_counter()
    cur = None
    try:
        cur = conn.execute(verdict.sql)
        raw = (
            cur.fetchmany(budget.QUERY_ROW_LIMIT + 1)
            if not verdict.limit_injected
            else cur.fetchall()
        )
        columns = [d[0] for d in cur.description] if cur.description else []
    except sqlite3.Error as exc:
        raise sql_error(conn, exc, started[0]) from None
    except (OverflowError, MemoryError):
        raise QueryInvalid(
            "a value in the result is too large to return", hint="Select fewer or smaller columns."
        ) from None
    finally:
        # A pooled connection must not keep a read open: it would block tend.
        if cur is not None:
            cur.close()
    elapsed = round((time.perf_counter() - started[0]) * 1000, 2)
    capped = len(raw) > budget.QUERY_ROW_LIMIT
    rows = [[datasets.cell(v) for v in r] for r in raw[: budget.QUERY_ROW_LIMIT]]
    limited = (verdict.limit_injected and len(rows) == budget.QUERY_ROW_LIMIT) or capped
    out: dict[str, Any] = {
        "columns": columns,
        "rows": rows,
        "row_count": len(rows),
        "limited": limited,
        "elapsed_ms": elapsed,
    }
    _fit(out, len(rows))
    return out


def _fit(out: dict[str, Any], matched: int) -> None:
    """Keep whole rows while the response fits; say plainly what was cut."""
    if budget.cost(out) <= budget.QUERY:
        return
    rows = out["rows"]
    per_row = [budget.tokens(budget.dumps(r)) for r in rows]
    ncols = len(out["columns"])

    def hint(kept: int) -> str:
        text = (
            f"Showing {kept} of {matched} rows. The other {matched - kept} matched your "
            f"query and exist: they were dropped by the {budget.QUERY}-token response "
            f"budget, not by your filter, do NOT report these {kept} as the complete "
            f"result. This statement returns {counted(ncols, 'column')}; ask again with fewer "
            "columns to fit more rows, or aggregate."
        )
        if kept == 0:
            text += f" One row costs about {per_row[0] if per_row else 0} tokens."
        return text

    out["truncated"] = True
    out["hint"] = hint(matched)
    while rows and budget.cost(out) > budget.QUERY:
        rows.pop()
        out["row_count"] = len(rows)
        out["hint"] = hint(len(rows))
    if budget.cost(out) > budget.QUERY:
        raise QueryInvalid(
            f"the names of the {counted(ncols, 'result column')} alone exceed the "
            f"{budget.QUERY}-token budget",
            hint="Select fewer columns, or give them short aliases.",
        )
