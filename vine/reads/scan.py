"""``scan``: a metadata query over a branch, served from the catalog alone."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, get_args

from .. import budget, hints
from ..argtypes import ScanField
from ..errors import SchemaError
from ..forest import Forest, coverage_text
from ..heat import LIST_DEPOSIT
from ..hints import Hole
from ..ids import ROOT_INDEX, branch_id, folder_prefix, normalize
from ..kinds import BRANCH, FILTER_KINDS, kind_of
from ..suggest import did_you_mean
from ..windows import Window

DEFAULT_FIELDS = ["id", "type", "summary", "body_tokens"]
# The fields scan returns: the signature's closed set, so the two never disagree.
FIELDS: tuple[str, ...] = get_args(ScanField)
_JSON_FIELDS = ("tags", "aliases", "trail", "outline")
_EQUALITY = (
    "type",
    "source",
    "entity_kind",
    "payload_type",
    "origin",
    "parent",
    "title",
    "summary",
    "created",
    "updated",
    "confidence",
    "coverage",
    "id",
)
_COMPARE = {
    "updated_after": ("updated", ">="),
    "updated_before": ("updated", "<="),
    "created_after": ("created", ">="),
    "created_before": ("created", "<="),
}


def scan(
    forest: Forest,
    parent_id: str,
    filter: Mapping[str, Any] | None,
    fields: Sequence[str] | None,
    recursive: bool,
    limit: int,
    after: str | None,
    win: Window,
) -> dict[str, Any]:
    """Children (or the whole subtree) of a branch, filtered, hottest first."""
    fields = list(dict.fromkeys(fields)) if fields else list(DEFAULT_FIELDS)
    bad = [f for f in fields if f not in FIELDS]
    if bad:
        raise SchemaError(
            f"scan: unknown field {bad[0]!r}{did_you_mean(bad[0], FIELDS)}",
            hint="fields accepts: " + ", ".join(FIELDS) + ".",
        )
    if "id" not in fields:
        fields.insert(0, "id")
    limit = min(max(limit, 1), budget.SCAN_LIMIT_MAX)
    parent = _branch(forest, parent_id)
    where, args = _scope(parent, recursive)
    fsql, fargs = _filter(filter or {})
    wsql, wargs = win.sql()
    where += fsql + wsql
    args += fargs + wargs
    conn = forest.catalog.conn
    total = conn.execute(f"SELECT count(*) FROM nodes WHERE {where}", args).fetchone()[0]
    if after is not None:
        rows = forest.catalog.rows(
            f"SELECT * FROM nodes WHERE {where} AND id > ? ORDER BY id LIMIT ?",
            (*args, after, limit + 1),
        )
        heat = forest.heat.many(r["id"] for r in rows)
    else:
        rows, heat = _hottest(forest, where, args, total, limit + 1)
    more = len(rows) > limit
    rows = rows[:limit]
    nodes = [_project(r, fields, heat.get(r["id"], 0.0)) for r in rows]
    out: dict[str, Any] = {
        "nodes": nodes,
        "truncated": more,
        "total": total,
        "returned": len(nodes),
    }
    if after is not None and more:
        out["next"] = nodes[-1]["id"]
    if win.active:
        out["window"] = win.echo()
    _fit(out, after is not None)
    forest.heat.deposit((n["id"] for n in out["nodes"]), LIST_DEPOSIT)
    return out


def _branch(forest: Forest, raw: str) -> str:
    node_id = normalize(raw, param="parent_id")
    index = branch_id(node_id)
    row = forest.catalog.row(index)
    if row is None or row["kind"] != BRANCH:
        if forest.catalog.row(node_id) is not None:
            raise SchemaError(
                f"scan: {node_id} is not a branch",
                hint=f"scan lists a branch; use {hints.call('look', 'id')} or "
                f"{hints.call('move', 'id')} on a leaf.",
            )
        raise forest.absent(index)
    return index


def _scope(index: str, recursive: bool) -> tuple[str, list[Any]]:
    if index == ROOT_INDEX and recursive:
        return "id != ?", [ROOT_INDEX]
    if not recursive:
        return "parent = ?", [index]
    prefix = folder_prefix(index)
    # An exact prefix range (LIKE would read '_' as a wildcard).
    return "id >= ? AND id < ? AND id != ?", [prefix, prefix[:-1] + chr(ord("/") + 1), index]


def _scalar(key: str, value: Any) -> Any:
    """A filter value SQLite can compare: a string, a 64-bit integer or a number."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and -(2**63) <= value < 2**63:
        return value
    if isinstance(value, float | str):
        return value
    raise SchemaError(f"scan: filter {key} takes a string or a number, got {value!r:.60}")


def _filter(spec: Mapping[str, Any]) -> tuple[str, list[Any]]:
    sql, args = "", []
    for key, value in spec.items():
        if key == "tags_any":
            tags = value if isinstance(value, list) else [value]
            if not tags or not all(isinstance(t, str) for t in tags):
                raise SchemaError("scan: tags_any takes a list of strings")
            marks = ",".join("?" * len(tags))
            sql += f" AND EXISTS (SELECT 1 FROM json_each(nodes.tags) WHERE value IN ({marks}))"
            args += tags
        elif key in _COMPARE:
            col, op = _COMPARE[key]
            if not isinstance(value, str):
                raise SchemaError(f"scan: {key} takes an ISO date string")
            sql += f" AND {col} IS NOT NULL AND {col} != '' AND {col} {op} ?"
            args.append(value)
        elif key == "min_confidence":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise SchemaError("scan: min_confidence takes a number")
            sql += " AND confidence >= ?"
            args.append(float(value))
        elif key == "origin_prefix":
            if not isinstance(value, str):
                raise SchemaError("scan: origin_prefix takes a string")
            sql += " AND origin IS NOT NULL AND substr(origin, 1, ?) = ?"
            args += [len(value), value]
        elif key == "kind":
            if not isinstance(value, str) or value not in FILTER_KINDS:
                raise SchemaError("scan: kind is 'note' (or 'banana') or 'branch'")
            sql += " AND kind = ?"
            args.append(FILTER_KINDS[value])
        elif key in _EQUALITY:
            sql += f" AND {key} = ?"
            args.append(_scalar(key, value))
        else:
            raise SchemaError(
                f"unknown scan filter: {key}",
                hint=(
                    "Filters: tags_any, updated_after, updated_before, created_after, "
                    "created_before, min_confidence, origin_prefix, kind, or equality on "
                    + ", ".join(_EQUALITY)
                    + "."
                ),
            )
    return sql, args


# Up to this many nodes in scope, ranking happens on their ids in Python.
_SMALL_SCOPE = 3000


def _hottest(
    forest: Forest, where: str, args: list[Any], total: int, n: int
) -> tuple[list[Any], dict[str, float]]:
    """The first ``n`` rows by heat, ties in id order, without reading the whole scope.

    A small scope is ranked from its ids alone. In a large one the heated nodes
    (few, in practice) are checked against the scope, and the rest follow in id
    order, which the primary key gives for free.
    """
    keys, threshold = forest.heat.rank_keys()
    conn = forest.catalog.conn
    floor = -math.inf

    def rank(node_id: str) -> tuple[float, str]:
        key = keys.get(node_id, floor)
        return (-key if key >= threshold else math.inf, node_id)

    if total <= _SMALL_SCOPE:
        ids = [r[0] for r in conn.execute(f"SELECT id FROM nodes WHERE {where}", args)]
        chosen = sorted(ids, key=rank)[:n]
    else:
        chosen = []
        for chunk in forest.heat.hottest():
            found = {
                r[0]
                for r in conn.execute(
                    f"SELECT id FROM nodes WHERE {where} AND id IN "
                    "(SELECT value FROM json_each(?))",
                    (*args, json.dumps(chunk)),
                )
            }
            chosen += [nid for nid in chunk if nid in found]
            if len(chosen) >= n:
                chosen = chosen[:n]
                break
        if len(chosen) < n:
            chosen += [
                r[0]
                for r in conn.execute(
                    f"SELECT id FROM nodes WHERE {where} AND id NOT IN "
                    "(SELECT value FROM json_each(?)) ORDER BY id LIMIT ?",
                    (*args, json.dumps(chosen), n - len(chosen)),
                )
            ]
    by_id = {
        r["id"]: r
        for r in forest.catalog.rows(
            "SELECT * FROM nodes WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(chosen),),
        )
    }
    rows = [by_id[nid] for nid in chosen if nid in by_id]
    return rows, forest.heat.many(chosen)


def _project(row: Any, fields: list[str], heat: float) -> dict[str, Any]:
    item: dict[str, Any] = {}
    for f in fields:
        if f == "heat":
            item[f] = heat
        elif f == "kind":
            item[f] = kind_of(row["kind"])
        elif f == "coverage":
            item[f] = coverage_text(row["coverage"]) if row["coverage"] else None
        elif f in _JSON_FIELDS:
            item[f] = json.loads(row[f]) if row[f] else []
        else:
            item[f] = row[f]
    if row["id"].startswith("_meta/"):
        item["system"] = True
    return item


def _fit(out: dict[str, Any], cursor: bool) -> None:
    """Shed tail nodes to 800 tokens, with the meta fields reserved at full size."""
    if budget.cost(out) <= budget.SCAN:
        return
    hint = (
        "Cut by the 800-token budget, not by the filter: ask for fewer fields "
        f"({hints.option('scan', 'fields', ['id', 'title'])}) or pass "
        f"{hints.option('scan', 'after', Hole('next'))} to page."
    )
    # Reserve the largest forms of what the cut adds or grows, then count exactly.
    trial = dict(out, truncated=True, returned=out["total"], hint=hint)
    if cursor:
        trial["next"] = max((n["id"] for n in out["nodes"]), key=len, default="")
    nodes = out["nodes"]
    chars = len(budget.dumps(trial))
    while nodes and budget.tokens_of_chars(chars) > budget.SCAN:
        chars -= len(budget.dumps(nodes.pop())) + (2 if nodes else 0)
    out["truncated"] = True
    out["returned"] = len(nodes)
    if cursor and nodes:
        out["next"] = nodes[-1]["id"]
    out["hint"] = hint
