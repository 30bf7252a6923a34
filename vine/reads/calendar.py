"""``calendar``: the periods that hold nodes, and how many, grouped in SQLite."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from .. import budget
from ..errors import SchemaError
from ..forest import Forest
from ..ids import ROOT_INDEX, branch_id, folder_prefix, normalize
from ..visibility import Visibility
from ..windows import Window, window

# A usable date: the column starts with YYYY-MM-DD (tested on the bare column).
DATED = "{col} GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*'"
# Each period's key, from one distinct date ``d``. A week is numbered from Monday
# 0001-01-01 (SQLite's julianday of that day is 1721425.5).
_PERIOD = {
    "day": "substr(d, 1, 10)",
    "week": "CAST(julianday(substr(d, 1, 10)) - 1721425.5 AS INTEGER) / 7",
    "month": "substr(d, 1, 7)",
    "year": "substr(d, 1, 4)",
}
_FAR_HINT = (
    "Cut by the 800-token budget: the older periods exist. Narrow with since/until "
    "or ask for a coarser granularity."
)


def scope_range(forest: Forest, scope: str | None, param: str = "scope") -> tuple[str, str]:
    """The branch a ``scope`` names (``_index`` for none) and its id prefix."""
    if scope is None or scope in ("", ROOT_INDEX):
        return ROOT_INDEX, ""
    node_id = normalize(scope, param=param)
    index = branch_id(node_id)
    row = forest.catalog.row(index)
    if row is None or row["kind"] != "branch":
        if forest.catalog.row(node_id) is not None:
            raise SchemaError(
                f"{param}: {node_id} is not a branch",
                hint="Give a branch (its whole subtree is covered).",
            )
        raise forest.absent(index)
    return index, folder_prefix(index)


def where_scope(start: str) -> tuple[str, list[str]]:
    """A predicate (starting with `` AND``) for every node under the prefix ``start``."""
    if not start:
        return "", []
    return " AND id >= ? AND id < ?", [start, start[:-1] + chr(ord("/") + 1)]


def calendar(
    forest: Forest, scope: str | None, granularity: str, win: Window, limit: int, seen: Visibility
) -> dict[str, Any]:
    """Periods newest first, each with the window bounds that read exactly its nodes.

    The dates are grouped twice in one statement: by distinct date first (which the
    date column's index gives in order, without sorting the nodes), then by period.
    """
    limit = min(max(limit, 1), budget.CALENDAR_LIMIT_MAX)
    index, start = scope_range(forest, scope)
    col = win.field
    where, args = where_scope(start)
    vsql, vargs = seen.sql()
    where += vsql
    args += vargs
    # The nodes a recursive scan of the scope lists: its subtree, its own index aside
    # (by rowid, which the date column's index holds).
    own = forest.catalog.row(index)
    if own is not None:
        where += " AND rowid != ?"
        args.append(own["ord"])
    dated = " AND " + DATED.format(col=col)
    if win.lo:
        dated += f" AND {col} >= ?"
    if win.hi:
        dated += f" AND {col} < ?"
    dargs = [a for a in (win.lo, win.hi) if a]
    conn = forest.catalog.conn
    rows = conn.execute(
        f"SELECT {_PERIOD[granularity]} AS p, sum(n), min(substr(d, 1, 10)), "
        f"max(substr(d, 1, 10)) FROM (SELECT {col} AS d, count(*) AS n FROM nodes "
        f"WHERE 1=1{where}{dated} GROUP BY {col}) GROUP BY p ORDER BY p DESC",
        [*args, *dargs],
    ).fetchall()
    blank = conn.execute(
        f"SELECT count(*) FROM nodes WHERE 1=1{where} AND NOT coalesce("
        + DATED.format(col=col)
        + ", 0)",
        args,
    ).fetchone()[0]
    buckets: list[dict[str, Any]] = []
    invalid = dated_nodes = periods = 0
    first = last = None
    for key, n, low, high in rows:
        bucket = (
            _bucket(granularity, key, n)
            if len(buckets) < limit
            else (key if _valid(granularity, key) else None)
        )
        if bucket is None:
            invalid += n  # a date no calendar holds (2026-02-30): as good as none
            continue
        if isinstance(bucket, dict):
            buckets.append(_clipped(bucket, win))
        periods += 1
        dated_nodes += n
        first = low if first is None or low < first else first
        last = high if last is None or high > last else last
    out: dict[str, Any] = {
        "date_field": col,
        "granularity": granularity,
        "range": {"first": first, "last": last, "nodes": dated_nodes},
        "buckets": buckets,
        "undated": blank + invalid,
        "truncated": periods > limit,
    }
    if win.active:
        out["window"] = win.echo()
    if budget.cost(out) > budget.CALENDAR:
        out["hint"] = _FAR_HINT
        budget.shrink_list(out, "buckets", budget.CALENDAR)
        out["truncated"] = True
    return out


_MONDAY_ONE = date(1, 1, 1)


def _clipped(bucket: dict[str, Any], win: Window) -> dict[str, Any]:
    """``bucket`` with its since/until narrowed to the window's own bounds where the
    window cuts the period, so that they read back the nodes it counted and no more."""
    if not win.active:
        return bucket
    span = window(bucket["since"], bucket["until"], win.field)
    if win.lo and span.lo and win.lo > span.lo and win.since:
        bucket["since"] = win.since.strip()
    if win.hi and span.hi and win.hi < span.hi and win.until:
        bucket["until"] = win.until.strip()
    return bucket


def _valid(granularity: str, key: Any) -> bool:
    """True for the key of a period that exists (what :func:`_bucket` accepts)."""
    return _bucket(granularity, key, 0) is not None


def _bucket(granularity: str, key: Any, nodes: int) -> dict[str, Any] | None:
    """One period: its label and the since/until a windowed read takes for it (None
    for a date that does not exist)."""
    if key is None:
        return None
    try:
        if granularity == "week":
            monday = _MONDAY_ONE + timedelta(weeks=int(key))
            year, week, _ = monday.isocalendar()
            return {
                "period": f"{year}-W{week:02d}",
                "since": monday.isoformat(),
                "until": (monday + timedelta(days=6)).isoformat(),
                "nodes": nodes,
            }
        if granularity == "day":
            date.fromisoformat(key)
        elif granularity == "month":
            date.fromisoformat(key + "-01")
    except (ValueError, OverflowError, TypeError):
        return None
    return {"period": key, "since": key, "until": key, "nodes": nodes}
