"""``move``: neighbours along typed edges, or the physical children of a branch."""

from __future__ import annotations

from typing import Any

from .. import budget, hints
from ..errors import SchemaError
from ..forest import Forest
from ..heat import LIST_DEPOSIT
from ..suggest import did_you_mean

DIRECTIONS = ("out", "in", "both")


def move(forest: Forest, id: str, rel: str | None, direction: str) -> dict[str, Any]:
    """Every matching neighbour, hottest first, cut to 600 tokens from the tail."""
    if direction not in DIRECTIONS:
        raise SchemaError(
            f"move: direction must be out, in or both; got {direction!r}",
            hint="'both' is the word for every direction.",
        )
    row = forest.resolve(id)
    node_id = row["id"]
    if rel is not None and rel != "children":
        _check_rel(forest, rel)
    conn = forest.catalog.conn
    found: list[dict[str, Any]] = []
    if rel == "children":
        for cid, ctype, summary in conn.execute(
            "SELECT id, type, summary FROM nodes WHERE parent = ? ORDER BY rowid", (node_id,)
        ):
            found.append(
                {
                    "id": cid,
                    "rel": "children",
                    "direction": "out",
                    "type": ctype,
                    "summary": summary,
                }
            )
    else:
        dialect = forest.dialect
        if direction in ("out", "both"):
            for erel, dst, ntype, summary in conn.execute(
                "SELECT e.rel, e.dst, n.type, n.summary FROM edges e LEFT JOIN nodes n "
                "ON n.id = e.dst WHERE e.src = ? ORDER BY e.ord",
                (node_id,),
            ):
                if rel is None or dialect.matches_rel(erel, rel):
                    found.append(
                        {
                            "id": dst,
                            "rel": erel,
                            "direction": "out",
                            "type": ntype or "?",
                            "summary": summary or "",
                        }
                    )
        if direction in ("in", "both"):
            for erel, src, ntype, summary in conn.execute(
                "SELECT e.rel, e.src, n.type, n.summary FROM edges e LEFT JOIN nodes n "
                "ON n.id = e.src WHERE e.dst = ? ORDER BY n.rowid, e.rel",
                (node_id,),
            ):
                if rel is None or dialect.matches_rel(erel, rel):
                    found.append(
                        {
                            "id": src,
                            "rel": dialect.inverse(erel),
                            "direction": "in",
                            "type": ntype or "?",
                            "summary": summary or "",
                        }
                    )
    heat = forest.heat.many(n["id"] for n in found)
    ordered = sorted(enumerate(found), key=lambda p: (-heat[p[1]["id"]], p[0]))
    neighbors = []
    for _, item in ordered:
        item["heat"] = heat[item["id"]]
        neighbors.append(item)
    out: dict[str, Any] = {"neighbors": neighbors, "truncated": False}
    total = len(found)
    budget.shrink_with_hint(
        out,
        "neighbors",
        budget.MOVE,
        lambda kept: (
            f"{total} neighbours matched; {kept} fit the 600-token budget. Name a "
            f"rel, or use {hints.call('scan', 'parent_id', 'filter', 'fields')} for a "
            "filtered, cheaper list."
        ),
    )
    forest.heat.deposit((n["id"] for n in out["neighbors"]), LIST_DEPOSIT)
    return out


def _check_rel(forest: Forest, rel: str) -> None:
    """A rel the dialect declares (or the inverse name it gives one), else ``E_SCHEMA``:
    a misspelt rel must not read as a node without neighbours."""
    rels = forest.dialect.rels
    known = dict.fromkeys([*rels, *(inv for inv in rels.values() if inv)])
    if rel not in known:
        raise SchemaError(
            f"move: unknown rel {rel!r}{did_you_mean(rel, known)}",
            hint="Rels here: " + ", ".join(known) + "; or children for a branch's children.",
        )
