"""``move``: neighbours along typed edges, or the physical children of a branch."""

from __future__ import annotations

from collections.abc import Callable
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
        # Per side: the edge end that is the neighbour, the end that is this node, the
        # order, and the rel as this node names it (an incoming link by its inverse).
        sides: tuple[tuple[str, str, str, str, Callable[[str], str]], ...] = (
            ("out", "e.dst", "e.src", "e.ord", str),
            ("in", "e.src", "e.dst", "n.rowid, e.rel", dialect.inverse),
        )
        for side, other, this, order, named in sides:
            if direction not in (side, "both"):
                continue
            for erel, neighbor, ntype, summary in conn.execute(
                f"SELECT e.rel, {other}, n.type, n.summary FROM edges e LEFT JOIN nodes n "
                f"ON n.id = {other} WHERE {this} = ? ORDER BY {order}",
                (node_id,),
            ):
                if rel is None or dialect.matches_rel(erel, rel):
                    found.append(
                        {
                            "id": neighbor,
                            "rel": named(erel),
                            "direction": side,
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
