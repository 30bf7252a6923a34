"""``calendar``: the periods that hold nodes, and how many, grouped in SQLite."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from .. import budget
from ..errors import SchemaError
from ..forest import Forest
from ..ids import ROOT_INDEX, branch_id, folder_prefix, normalize
from ..visibility import Visibility
from ..windows import Window

# A usable date: the column starts with YYYY-MM-DD (tested on the bare column).
DATED = "{col} GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*'"
_PERIOD = {
    "day": "date(substr({col}, 1, 10))",
    # The Monday of the ISO week: the next Sunday (or the day itself), less six days.
    "week": "date(substr({col}, 1, 10), 'weekday 0', '-6 days')",
    "month": "strftime('%Y-%m', substr({col}, 1, 10))",
    "year": "strftime('%Y', substr({col}, 1, 10))",
}
_FAR_HINT = ("Cut by the 800-token budget: the older periods exist. Narrow with since/until "
             "or ask for a coarser granularity.")


def scope_range(forest: Forest, scope: str | None, param: str = "scope") -> tuple[str, str]:
    """The branch a ``scope`` names (``_index`` for none) and its id prefix."""
    if scope is None or scope in ("", ROOT_INDEX):
        return ROOT_INDEX, ""
    node_id = normalize(scope, param=param)
    index = branch_id(node_id)
    row = forest.catalog.row(index)
    if row is None or row["kind"] != "branch":
        if forest.catalog.row(node_id) is not None:
            raise SchemaError(f"{param}: {node_id} is not a branch",
                              hint="Give a branch (its whole subtree is covered).")
        raise forest.absent(index)
    return index, folder_prefix(index)


def where_scope(start: str) -> tuple[str, list[str]]:
    """A predicate (starting with `` AND``) for every node under the prefix ``start``."""
    if not start:
        return "", []
    return " AND id >= ? AND id < ?", [start, start[:-1] + chr(ord("/") + 1)]


def calendar(forest: Forest, scope: str | None, granularity: str, win: Window, limit: int,
             seen: Visibility) -> dict[str, Any]:
    """Periods newest first, each with the window bounds that read exactly its nodes."""
    limit = min(max(limit, 1), budget.CALENDAR_LIMIT_MAX)
    index, start = scope_range(forest, scope)
    col = win.field
    # The nodes a recursive scan of the scope lists: its subtree, its own index aside.
    where, args = where_scope(start)
    where += " AND id != ?"
    args.append(index)
    vsql, vargs = seen.sql()
    where += vsql
    args += vargs
    dated = " AND " + DATED.format(col=col)
    if win.lo:
        dated += f" AND {col} >= ?"
    if win.hi:
        dated += f" AND {col} < ?"
    dargs = [a for a in (win.lo, win.hi) if a]
    conn = forest.catalog.conn
    period = _PERIOD[granularity].format(col=col)
    rows = conn.execute(
        f"SELECT {period} AS p, count(*) FROM nodes WHERE 1=1{where}{dated} "
        "GROUP BY p ORDER BY p DESC", [*args, *dargs]).fetchall()
    first, last = conn.execute(
        f"SELECT min(substr({col}, 1, 10)), max(substr({col}, 1, 10)) FROM nodes "
        f"WHERE 1=1{where}{dated} AND {period} IS NOT NULL", [*args, *dargs]).fetchone()
    blank = conn.execute(
        f"SELECT count(*) FROM nodes WHERE 1=1{where} AND NOT coalesce("
        + DATED.format(col=col) + ", 0)", args).fetchone()[0]
    buckets, invalid = [], 0
    for key, n in rows:
        bucket = _bucket(granularity, key, n) if key is not None else None
        if bucket is None:
            invalid += n     # a date no calendar holds (2026-02-30): as good as none
        else:
            buckets.append(bucket)
    out: dict[str, Any] = {
        "date_field": col, "granularity": granularity,
        "range": {"first": first, "last": last, "nodes": sum(b["nodes"] for b in buckets)},
        "buckets": buckets[:limit], "undated": blank + invalid,
        "truncated": len(buckets) > limit}
    if win.active:
        out["window"] = win.echo()
    if budget.cost(out) > budget.CALENDAR:
        out["hint"] = _FAR_HINT
        budget.shrink_list(out, "buckets", budget.CALENDAR)
        out["truncated"] = True
    return out


def _bucket(granularity: str, key: str, nodes: int) -> dict[str, Any] | None:
    """One period: its label and the since/until a windowed read takes for it (None
    for a day that does not exist)."""
    if granularity == "day":
        try:
            date.fromisoformat(key)
        except ValueError:
            return None
    if granularity == "week":
        monday = date.fromisoformat(key)
        year, week, _ = monday.isocalendar()
        return {"period": f"{year}-W{week:02d}", "since": key,
                "until": (monday + timedelta(days=6)).isoformat(), "nodes": nodes}
    return {"period": key, "since": key, "until": key, "nodes": nodes}
