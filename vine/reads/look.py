"""``look``: the digest of one node, within 500 tokens (2000 for a batch)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any, get_args

from .. import budget, datasets
from ..argtypes import LookField
from ..errors import SchemaError, VineError
from ..forest import Forest, coverage_text, row_list
from ..heat import READ_DEPOSIT
from ..nodes import Node
from ..suggest import did_you_mean
from .batch import batch

# Shed from the tail of these lists, in this order, before dropping sample_rows.
SHED_ORDER = ("outline", "children", "edges_in", "edges_out")
# Last resorts for a digest still over budget (huge hand-written fields).
LAST_RESORT = ("sample_rows", "notes", "query_manual", "aliases", "tags", "cross_trails")
DATASET_FIELDS = ("query_manual", "sample_rows", "notes")
# Every key a digest can hold, as ``fields`` may name them.
FIELDS: tuple[str, ...] = get_args(LookField)


def look(forest: Forest, id: str | list[str], fields: Sequence[str] | None) -> dict[str, Any]:
    """One digest, or a batch of up to 10."""
    bad = [f for f in fields or () if f not in FIELDS]
    if bad:
        raise SchemaError(
            f"look: unknown field {bad[0]!r}{did_you_mean(bad[0], FIELDS)}",
            hint="fields accepts: " + ", ".join(FIELDS) + ".",
        )
    if isinstance(id, list):
        return _batch(forest, id, fields)
    digest = _digest(forest, id, fields)
    forest.heat.deposit([digest["id"]], READ_DEPOSIT)
    return digest


def _batch(forest: Forest, ids: list[str], fields: Sequence[str] | None) -> dict[str, Any]:
    out = batch(
        "look", ids, budget.LOOK_BATCH_MAX, budget.LOOK_BATCH, lambda i: _digest(forest, i, fields)
    )
    forest.heat.deposit((n["id"] for n in out["nodes"]), READ_DEPOSIT)
    return out


def _digest(forest: Forest, raw: str, fields: Sequence[str] | None) -> dict[str, Any]:
    row = forest.resolve(raw)
    node_id = row["id"]
    wanted = set(fields) if fields else None

    def want(key: str) -> bool:
        return wanted is None or key in wanted

    out: dict[str, Any] = {"id": node_id}
    for key in ("type", "title", "summary"):
        out[key] = row[key]
    out["tags"] = row_list(row, "tags")
    out["confidence"] = row["confidence"]
    for key in ("created", "updated", "source"):
        out[key] = row[key]
    aliases = row_list(row, "aliases")
    if aliases:
        out["aliases"] = aliases
    if row["origin"]:
        out["origin"] = row["origin"]
    out_edges, in_edges, degree = _edges(forest, node_id)
    out["edges_out"] = out_edges
    out["edges_in"] = in_edges
    notes_clipped = False
    if row["kind"] == "branch":
        out["children"] = _children(forest, node_id)
        body = _body_or_empty(forest, node_id) if want("cross_trails") else ""
        trails = _cross_trails(forest, node_id, body)
        if trails:
            out["cross_trails"] = trails
        if row["coverage"]:
            out["coverage"] = coverage_text(row["coverage"])
    else:
        out["outline"] = row_list(row, "outline")
    if row["type"] == "dataset" and any(want(f) for f in DATASET_FIELDS):
        notes_clipped = _dataset(forest, row, out, want)
    heat = forest.heat.get(node_id)
    out["stats"] = {"body_tokens": row["body_tokens"], "degree": degree, "heat": heat}
    if want("revision"):
        # What a graft's if_revision names to refuse an edit of a node changed since.
        out["revision"] = forest.revision(node_id)
    if wanted is not None:
        out = {k: v for k, v in out.items() if k == "id" or k in wanted}
    _fit(out, budget.LOOK, notes_clipped)
    return out


def _body_or_empty(forest: Forest, node_id: str) -> str:
    try:
        return forest.read(node_id).body
    except VineError:
        return ""


def _cross_trails(forest: Forest, node_id: str, body: str) -> list[str]:
    if not body:
        return []
    found = Node(node_id, {}, body).section("Cross trails")
    if found is None:
        return []
    lines = found[1].split("\n")[1:]
    return [line.strip()[2:].strip() for line in lines if line.strip().startswith("- ")]


def _edges(forest: Forest, node_id: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    conn = forest.catalog.conn
    outs = conn.execute(
        "SELECT e.rel, e.dst, n.summary FROM edges e LEFT JOIN nodes n ON n.id = e.dst "
        "WHERE e.src = ? ORDER BY e.ord",
        (node_id,),
    ).fetchall()
    ins = conn.execute(
        "SELECT e.rel, e.src FROM edges e LEFT JOIN nodes n ON n.id = e.src "
        "WHERE e.dst = ? ORDER BY n.rowid, e.rel",
        (node_id,),
    ).fetchall()
    heat = forest.heat.many([r[1] for r in outs] + [r[1] for r in ins])
    dialect = forest.dialect
    out_sorted = sorted(enumerate(outs), key=lambda p: (-heat[p[1][1]], p[0]))
    in_sorted = sorted(enumerate(ins), key=lambda p: (-heat[p[1][1]], p[0]))
    edges_out = [
        {
            "rel": rel,
            "target": dst,
            "target_summary": budget.truncate_text(summary or "", budget.NEIGHBOUR_SUMMARY),
        }
        for _, (rel, dst, summary) in out_sorted[: budget.EDGE_CAP]
    ]
    edges_in = [
        {"rel": dialect.inverse(rel), "source": src}
        for _, (rel, src) in in_sorted[: budget.EDGE_CAP]
    ]
    return edges_out, edges_in, len(outs) + len(ins)


def _children(forest: Forest, node_id: str) -> list[dict[str, Any]]:
    rows = forest.catalog.conn.execute(
        "SELECT id, summary FROM nodes WHERE parent = ? ORDER BY rowid", (node_id,)
    ).fetchall()
    heat = forest.heat.many(r[0] for r in rows)
    ordered = sorted(enumerate(rows), key=lambda p: (-heat[p[1][0]], p[0]))
    return [
        {"id": cid, "summary": budget.truncate_text(summary or "", budget.NEIGHBOUR_SUMMARY)}
        for _, (cid, summary) in ordered
    ]


def _dataset(forest: Forest, row: sqlite3.Row, out: dict[str, Any], want: Any) -> bool:
    """Add query_manual, sample_rows and notes; True when the notes were clipped."""
    node_id = row["id"]
    node = None
    try:
        node = forest.read(node_id)
    except VineError:
        pass
    manual = node.section("Query manual") if node else None
    examples = datasets.example_queries(manual[1]) if manual else []
    tables: dict[str, list[str]] = {}
    sample_rows = None
    problem = None
    if row["payload_type"] in (None, "sqlite"):
        try:
            path = forest.payload_path(row)
            conn = datasets.open_readonly(path, node_id)
            try:
                tables = datasets.tables(conn)
                if tables and want("sample_rows"):
                    sample_rows = datasets.sample(conn, next(iter(tables)), budget.SAMPLE_ROWS)
            finally:
                conn.close()
        except VineError as exc:
            problem = exc.message
        except sqlite3.DatabaseError as exc:
            problem = f"payload of {node_id} is not a readable SQLite file ({exc})"
    if want("query_manual"):
        out["query_manual"] = {"tables": tables, "example_queries": examples}
        if problem:
            out["query_manual"]["problem"] = problem
    if sample_rows is not None:
        out["sample_rows"] = sample_rows
    clipped = False
    if want("notes") and node is not None:
        notes = node.section("Notes")
        if notes:
            text = notes[1].split("\n", 1)[1].strip() if "\n" in notes[1] else ""
            short = budget.truncate_text(text, budget.NOTES)
            clipped = short != text
            out["notes"] = short
    return clipped


def _measure(out: dict[str, Any], clipped: list[str]) -> int:
    trial = dict(out)
    if clipped:
        trial["truncated"] = True
        trial["truncated_fields"] = clipped
    return budget.cost(trial)


def _fit(out: dict[str, Any], limit: int, notes_clipped: bool) -> None:
    """Fit ``limit``: shed list tails (outline, children, edges in, edges out), then drop
    sample_rows, then clip an oversized title or summary, then drop what is left.

    ``truncated_fields`` names exactly the fields that lost something.
    """
    clipped: list[str] = ["notes"] if notes_clipped else []

    def over() -> bool:
        return _measure(out, clipped) > limit

    def mark(key: str) -> None:
        if key not in clipped:
            clipped.append(key)

    # The common case fits at once: one measure, not one per step.
    if over():
        for key in SHED_ORDER:
            items = out.get(key)
            while items and over():
                items.pop()
                mark(key)
        for key in ("sample_rows",):
            if out.get(key) and over():
                del out[key]
                mark(key)
        for key in ("summary", "title"):
            value = out.get(key)
            if isinstance(value, str) and over():
                short = budget.truncate_text(value, budget.SUMMARY_MAX)
                if short != value:
                    out[key] = short
                    mark(key)
        for key in LAST_RESORT:
            if out.get(key) and over():
                del out[key]
                mark(key)
    if clipped:
        stats = out.pop("stats", None)
        out["truncated"] = True
        out["truncated_fields"] = clipped
        if stats is not None:
            out["stats"] = stats
