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
_HINT = ("Cut by the 800-token budget: the smaller regions exist. Ask for one of them "
         "with scope to see its own regions.")


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
    cut = cut[:cut.rfind("/") + 1]
    if not cut or cut.endswith("//") or cut.endswith(":/"):
        return None
    return cut


def _roots(forest: Forest, index: str, start: str, seen: Visibility,
           vsql: str, vargs: list[str]) -> list[str]:
    """The regions: branch children of the scope's index, or a scoped caller's own
    subtrees when it asked for the whole forest and may not see it."""
    if index == ROOT_INDEX and not seen.whole:
        granted = sorted(a for a in seen.allow if a)
        # A subtree inside another granted one is already counted with it.
        top = [a for a in granted if not any(a != b and a.startswith(b) for b in granted)]
        wanted = [a + "_index" for a in top]
        return [r[0] for r in forest.catalog.conn.execute(
            "SELECT id FROM nodes WHERE kind = 'branch' AND id IN "
            f"(SELECT value FROM json_each(?)){vsql} ORDER BY id",
            (json.dumps(wanted), *vargs))]
    return [r[0] for r in forest.catalog.conn.execute(
        f"SELECT id FROM nodes WHERE parent = ? AND kind = 'branch' AND id != ?{vsql} "
        "ORDER BY id", (index, index, *vargs))
        if not r[0][len(start):].startswith("_")]


def coverage(forest: Forest, scope: str | None, date_field: str,
             seen: Visibility) -> dict[str, Any]:
    """Regions with their sizes, dates and shared origin, then totals."""
    if date_field not in DATE_FIELDS:   # the registry checks the enum; a host may not
        date_field = "created"
    index, start = scope_range(forest, scope)
    col = date_field
    vsql, vargs = seen.sql("id")
    where, args = where_scope(start)
    where += vsql
    args += vargs
    content = where + (" AND NOT (id >= ? AND id < ?)" if not start else "")
    cargs = args + ([SYSTEM, SYSTEM[:-1] + "0"] if not start else [])
    conn = forest.catalog.conn
    roots = _roots(forest, index, start, seen, vsql, vargs)
    spans = [[r, folder_prefix(r), folder_prefix(r)[:-1] + chr(ord("/") + 1)] for r in roots]
    nsql, nargs = seen.sql("n.id")
    dated = DATED.format(col=f"n.{col}")
    per_root = {row[0]: row[1:] for row in conn.execute(
        f"SELECT r.value ->> 0, count(*), sum(n.kind = 'branch'), "
        f"min(CASE WHEN {dated} THEN substr(n.{col}, 1, 10) END), "
        f"max(CASE WHEN {dated} THEN substr(n.{col}, 1, 10) END), "
        "min(nullif(n.origin, '')), max(nullif(n.origin, '')), "
        "sum(n.origin IS NULL OR n.origin = '') "
        "FROM json_each(?) AS r JOIN nodes AS n ON n.id >= r.value ->> 1 "
        f"AND n.id < r.value ->> 2 WHERE 1=1{nsql} GROUP BY r.value ->> 0",
        (json.dumps(spans), *nargs))}
    titles = dict(conn.execute(
        "SELECT id, title FROM nodes WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(roots),)).fetchall())
    regions = []
    for root in roots:
        count, branches, first, last, low, high, bare = per_root.get(
            root, (0, 0, None, None, None, None, 0))
        regions.append({"id": root, "title": titles.get(root), "nodes": count,
                        "branches": branches or 0, "first": first, "last": last,
                        "origin": common_origin(low, high), "without_origin": bare or 0})
    regions.sort(key=lambda r: (-r["nodes"], r["id"]))
    total = conn.execute(f"SELECT count(*) FROM nodes WHERE 1=1{content}",
                         cargs).fetchone()[0]
    types = dict(conn.execute(
        f"SELECT type, count(*) AS n FROM nodes WHERE 1=1{content} GROUP BY type "
        "ORDER BY n DESC, type", cargs).fetchall())
    sources = dict(conn.execute(
        "SELECT coalesce(nullif(source, ''), 'unset') AS s, count(*) AS n FROM nodes "
        f"WHERE 1=1{content} GROUP BY s ORDER BY n DESC, s", cargs).fetchall())
    undated = conn.execute(
        f"SELECT count(*) FROM nodes WHERE 1=1{content} AND NOT coalesce("
        + DATED.format(col=col) + ", 0)", cargs).fetchone()[0]
    system = 0 if start else conn.execute(
        f"SELECT count(*) FROM nodes WHERE id >= ? AND id < ?{vsql}",
        [SYSTEM, SYSTEM[:-1] + "0", *vargs]).fetchone()[0]
    out: dict[str, Any] = {"roots": regions, "total": total, "types": types,
                           "sources": sources, "undated": undated, "system": system,
                           "date_field": col, "truncated": False}
    if budget.cost(out) > budget.COVERAGE:
        out["hint"] = _HINT
        budget.shrink_list(out, "roots", budget.COVERAGE)
        out["truncated"] = True
    return out
