"""``coverage``: what a forest holds, region by region, from the catalog alone."""

from __future__ import annotations

import json
from typing import Any

from .. import budget
from ..forest import Forest
from ..ids import ROOT_INDEX, folder_prefix
from ..visibility import Visibility
from ..windows import DATE_FIELDS
from .calendar import DATED, scope_range, where_scope

SYSTEM = "_meta/"
_HINT = (
    "Cut by the 800-token budget: the smaller regions exist. Ask for one of them "
    "with scope to see its own regions."
)


def common_origin(low: str | None, high: str | None) -> str | None:
    """The longest prefix every origin between ``low`` and ``high`` (the least and the
    greatest) shares, ending at a path boundary (``/``); the origin itself when all are
    one. None when they share no more than a scheme."""
    if not low or not high:
        return None
    if low == high:
        return low
    n = 0
    for a, b in zip(low, high, strict=False):
        if a != b:
            break
        n += 1
    cut = low[:n]
    cut = cut[: cut.rfind("/") + 1]
    if not cut or cut.endswith("//") or cut.endswith(":/"):
        return None
    return cut


def _roots(
    forest: Forest, index: str, start: str, seen: Visibility, vsql: str, vargs: list[str]
) -> list[str]:
    """The regions: branch children of the scope's index, or a scoped caller's own
    subtrees when it asked for the whole forest and may not see it."""
    if index == ROOT_INDEX and not seen.whole:
        granted = sorted(a for a in seen.allow if a)
        # A subtree inside another granted one is already counted with it.
        top = [a for a in granted if not any(a != b and a.startswith(b) for b in granted)]
        wanted = [a + "_index" for a in top]
        return [
            r[0]
            for r in forest.catalog.conn.execute(
                "SELECT id FROM nodes WHERE kind = 'branch' AND id IN "
                f"(SELECT value FROM json_each(?)){vsql} ORDER BY id",
                (json.dumps(wanted), *vargs),
            )
        ]
    return [
        r[0]
        for r in forest.catalog.conn.execute(
            f"SELECT id FROM nodes WHERE parent = ? AND kind = 'branch' AND id != ?{vsql} "
            "ORDER BY id",
            (index, index, *vargs),
        )
        if not r[0][len(start) :].startswith("_")
    ]


def _minus(rows: Any, taken: list[Any]) -> dict[str, int]:
    """Counts by key, less one for each key in ``taken``, largest first (none at zero)."""
    counts = {k: n for k, n in rows}
    for key in taken:
        counts[key] = counts.get(key, 0) - 1
    return dict(
        sorted(((k, n) for k, n in counts.items() if n > 0), key=lambda kv: (-kv[1], str(kv[0])))
    )


def coverage(
    forest: Forest, scope: str | None, date_field: str, seen: Visibility
) -> dict[str, Any]:
    """Regions with their sizes, dates and shared origin, then totals."""
    if date_field not in DATE_FIELDS:  # the registry checks the enum; a host may not
        date_field = "created"
    index, start = scope_range(forest, scope)
    col = date_field
    vsql, vargs = seen.sql("id")
    where, args = where_scope(start)
    where += vsql
    args += vargs
    dated_col = DATED.format(col=col)
    conn = forest.catalog.conn
    roots = _roots(forest, index, start, seen, vsql, vargs)
    spans = [[r, folder_prefix(r), folder_prefix(r)[:-1] + chr(ord("/") + 1)] for r in roots]
    nsql, nargs = seen.sql("n.id")
    # One pass over each region's id range (the census index covers every column read);
    # its figures come back as one JSON array per region, so no rows are sorted.
    dated = f"n.{col} >= '0' AND n.{col} < ':'"
    per_root = {
        name: json.loads(figures)
        for name, figures in conn.execute(
            "SELECT r.value ->> 0, (SELECT json_array(count(*), "
            "count(*) FILTER (WHERE n.kind = 'branch'), "
            f"min(n.{col}) FILTER (WHERE {dated}), max(n.{col}) FILTER (WHERE {dated}), "
            "min(n.origin) FILTER (WHERE n.origin > ''), "
            "max(n.origin) FILTER (WHERE n.origin > ''), "
            "count(*) FILTER (WHERE n.origin IS NULL OR NOT n.origin > '')) "
            "FROM nodes AS n WHERE n.id >= r.value ->> 1 AND n.id < r.value ->> 2"
            f"{nsql}) FROM json_each(?) AS r",
            (*nargs, json.dumps(spans)),
        )
    }
    titles = dict(
        conn.execute(
            "SELECT id, title FROM nodes WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(roots),),
        ).fetchall()
    )
    regions = []
    for root in roots:
        count, branches, first, last, low, high, bare = per_root.get(
            root, (0, 0, None, None, None, None, 0)
        )
        first, last = (d[:10] if isinstance(d, str) else d for d in (first, last))
        regions.append(
            {
                "id": root,
                "title": titles.get(root),
                "nodes": count,
                "branches": branches or 0,
                "first": first,
                "last": last,
                "origin": common_origin(low, high),
                "without_origin": bare or 0,
            }
        )
    regions.sort(key=lambda r: (-r["nodes"], r["id"]))
    # Every aggregate counts the whole scope and, at the root, takes off the _meta
    # nodes (a handful, read on their own): without a predicate on the id, SQLite
    # answers each from the narrow index of its column.
    system_rows = (
        []
        if start
        else conn.execute(
            f"SELECT type, coalesce(nullif(source, ''), 'unset'), coalesce({dated_col}, 0) "
            f"FROM nodes WHERE id >= ? AND id < ?{vsql}",
            [SYSTEM, SYSTEM[:-1] + "0", *vargs],
        ).fetchall()
    )
    total = conn.execute(f"SELECT count(*) FROM nodes WHERE 1=1{where}", args).fetchone()[0] - len(
        system_rows
    )
    types = _minus(
        conn.execute(f"SELECT type, count(*) FROM nodes WHERE 1=1{where} GROUP BY type", args),
        [r[0] for r in system_rows],
    )
    by_source: dict[str, int] = {}
    for source, n in conn.execute(
        f"SELECT source, count(*) FROM nodes WHERE 1=1{where} GROUP BY source", args
    ):
        key = source or "unset"
        by_source[key] = by_source.get(key, 0) + n
    sources = _minus(by_source.items(), [r[1] for r in system_rows])
    undated = conn.execute(
        f"SELECT count(*) FROM nodes WHERE 1=1{where} AND NOT coalesce({dated_col}, 0)", args
    ).fetchone()[0] - sum(1 for r in system_rows if not r[2])
    system = len(system_rows)
    out: dict[str, Any] = {
        "roots": regions,
        "total": total,
        "types": types,
        "sources": sources,
        "undated": undated,
        "system": system,
        "date_field": col,
        "truncated": False,
    }
    if budget.cost(out) > budget.COVERAGE:
        out["hint"] = _HINT
        budget.shrink_list(out, "roots", budget.COVERAGE)
        out["truncated"] = True
    return out
