"""Which nodes replace which: the ``supersedes`` and ``succeeds`` edges, read from either
end (``superseded-by`` and ``precedes`` are the same facts declared by the older node).

``supersedes`` is a replacement: the older node is history. ``succeeds`` is temporal
order only: the newer node comes after the older one, which may still be the right
answer to a question about its own period.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..forest import Forest

REPLACES = "supersedes"
FOLLOWS = "succeeds"

_EDGES = """
SELECT e.dst, e.src, e.rel FROM edges e JOIN nodes n ON n.id = e.src
 WHERE e.dst IN (SELECT value FROM json_each(?1)) AND e.rel IN ('supersedes', 'succeeds')
UNION
SELECT e.src, e.dst, CASE e.rel WHEN 'superseded-by' THEN 'supersedes' ELSE 'succeeds' END
  FROM edges e JOIN nodes n ON n.id = e.dst
 WHERE e.src IN (SELECT value FROM json_each(?1)) AND e.rel IN ('superseded-by', 'precedes')
"""


@dataclass(frozen=True)
class Successor:
    """A live node that comes after another: ``id``, and ``rel`` (supersedes or
    succeeds)."""

    id: str
    rel: str


def successors(forest: Forest, ids: list[str]) -> dict[str, list[Successor]]:
    """For each of ``ids`` that has any, its live successors (sorted by id; a node that
    supersedes it before one that only succeeds it). Two nodes that each claim to come
    after the other cancel out; a node never succeeds itself."""
    if not ids:
        return {}
    rows = forest.catalog.conn.execute(_EDGES, (json.dumps(list(dict.fromkeys(ids))),))
    found: dict[str, dict[str, str]] = {}
    for old, new, rel in rows:
        if old == new:
            continue
        rels = found.setdefault(old, {})
        if rels.get(new) != REPLACES:
            rels[new] = rel
    out: dict[str, list[Successor]] = {}
    for old, rels in found.items():
        kept = [Successor(new, rel) for new, rel in rels.items()
                if not _claims(forest, new, old, found)]
        if kept:
            kept.sort(key=lambda s: (s.rel != REPLACES, s.id))
            out[old] = kept
    return out


def _claims(forest: Forest, old: str, new: str, found: dict[str, dict[str, str]]) -> bool:
    """Whether ``old`` is also said to come after ``new`` (a contradiction)."""
    if old in found:
        return new in found[old]
    return bool(successors_of_one(forest, old).get(new))


def successors_of_one(forest: Forest, node_id: str) -> dict[str, str]:
    """``{successor id: rel}`` of one node, without the contradiction check."""
    rows = forest.catalog.conn.execute(_EDGES, (json.dumps([node_id]),))
    return {new: rel for old, new, rel in rows if old == node_id and new != node_id}
